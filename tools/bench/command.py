"""The `command` bench: any benchmark command; its metric read from its output or a JSONL file."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path, PurePath
from typing import Protocol

from tools.bench.output import parse_bench_serving_block
from tools.bench.serving import BenchError, BenchResult, Metric, is_measurement
from tools.config import BenchSection
from tools.errors import ToolError


def _fill(template: str, base_url: str, port: int, python: str) -> str:
    return (
        template.replace("{base_url}", base_url)
        .replace("{port}", str(port))
        .replace("{python}", python)
    )


def _from_regex(pattern: str, text: str) -> list[float]:
    try:
        regex = re.compile(pattern, re.MULTILINE)
    except re.error as e:
        raise BenchError(f"bench.metric_regex {pattern!r} is not a valid regex: {e}") from None
    values = []
    for match in regex.finditer(text):
        raw = match.group(1) if regex.groups else match.group(0)
        try:
            values.append(float(raw))
        except ValueError:
            continue
    return values


def _from_jsonl(node: Shell, path: PurePath, key: str) -> list[float]:
    values = []
    try:
        lines = node.read_text(path).splitlines()
    except (OSError, ToolError) as e:
        raise BenchError(
            f"cannot read the bench's JSONL file {path}: {getattr(e, 'strerror', None) or e}"
        ) from None
    for line in lines:
        try:
            value = json.loads(line).get(key)
        except (json.JSONDecodeError, AttributeError):
            continue
        if isinstance(value, int | float) and not isinstance(value, bool):
            values.append(float(value))
    return values


class Shell(Protocol):
    """Where the bench command runs (a tools.node.nodes.Node): this machine or the node."""

    python: str

    def shell(
        self, command: str, cwd: PurePath, env: dict[str, str], timeout_s: float
    ) -> tuple[int | None, str]: ...

    def read_text(self, path: PurePath) -> str: ...


def run_command_bench(
    bench: BenchSection,
    node: Shell,
    cwd: PurePath,
    env: dict[str, str],
    base_url: str,
    port: int,
    log_path: Path,
) -> BenchResult:
    """Run the bench command in `cwd` on `node`; `base_url` is the server as the node sees it."""
    command = _fill(bench.command or "", base_url, port, node.python)
    code, output = node.shell(command, cwd, env, bench.timeout_s)
    log_path.write_text(f"$ {command}\n{output}")
    if code is None:
        raise BenchError(f"bench command timed out after {bench.timeout_s:g} s")
    if code != 0:
        last = output.strip().splitlines()[-1] if output.strip() else ""
        raise BenchError(f"bench command exited with {code}: {last}")
    if bench.metric_regex:
        values = _from_regex(bench.metric_regex, output)
    elif bench.metric_jsonl and bench.metric_key:
        jsonl = cwd / _fill(bench.metric_jsonl, base_url, port, node.python)
        values = _from_jsonl(node, jsonl, bench.metric_key)
    else:  # an sglang.bench_serving result block: its row named by bench.metric
        block = parse_bench_serving_block(output) or {}
        if bench.metric not in block:
            raise BenchError(
                "a command bench needs bench.metric_regex, bench.metric_jsonl with "
                "bench.metric_key, or a bench_serving result block with "
                f"{bench.metric!r} (it printed: {', '.join(sorted(block)) or 'none'})"
            )
        value = block[bench.metric]
        values = [float(value)] if isinstance(value, int | float) else []
    if not values:
        raise BenchError(
            f"the bench command's output has no value for {bench.metric!r} (see {log_path})"
        )
    wrong = [v for v in values if not is_measurement(v)]
    values = [v for v in values if is_measurement(v)]  # NaN, inf, 0 or negative: never counted
    if not values:
        raise BenchError(
            f"the bench command gave {bench.metric} = "
            f"{', '.join(f'{v:g}' for v in wrong[:3])}: not a measurement (a time or "
            f"rate is a finite number above zero; see {log_path})"
        )
    metric = Metric(
        name=bench.metric,
        unit=bench.unit,
        median=statistics.median(values),
        mean=statistics.fmean(values),
        samples=values,
        source="command",
    )
    return BenchResult(samples=[], metrics={bench.metric: metric})
