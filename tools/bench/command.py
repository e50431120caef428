"""The `command` bench: any benchmark command; its metric read from its output or a JSONL file."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from itertools import compress
from pathlib import Path, PurePath
from typing import Any, Protocol

from tools.bench.output import parse_bench_serving_block
from tools.bench.serving import BenchError, BenchResult, Metric, is_measurement
from tools.bounded_read import NotAFile
from tools.config import BenchSection
from tools.errors import ToolError
from tools.json_text import parse_json
from tools.proc.bounded_log import bounded_text


@dataclass(frozen=True)
class Placeholders:
    """What a bench command's placeholders stand for in one launch."""

    python: str  # {python}: this Python, or the node's
    worktree: PurePath  # {worktree}: the scratch tree's root (the target repository's root)
    config_dir: Path | None  # {config_dir}: the folder of debug-agent.toml (None: not known)
    base_url: str | None = None  # {base_url}: the server as the node sees it (no server: None)
    port: int | None = None  # {port}: the server's port

    def fill(self, template: str) -> str:
        values = {
            "{python}": self.python,
            "{worktree}": str(self.worktree),
            "{config_dir}": None if self.config_dir is None else str(self.config_dir),
            "{base_url}": self.base_url,
            "{port}": None if self.port is None else str(self.port),
        }
        for name, value in values.items():
            if name not in template:
                continue
            if value is None:
                raise BenchError(f"bench.command uses {name}, which has no value here")
            template = template.replace(name, value)
        return template


REGEX_TIMEOUT_S = 10.0  # reading a launch's output: far beyond any sane pattern's time
# "1,234.5" or "12,5": read as nothing, it was dropped beside the values under 1,000 that did
# read, and a launch's median came from its fast requests only
_COMMA_NUMBER = re.compile(r"[+-]?\d[\d,]*,\d+(?:\.\d+)?")


def _matches(pattern: str, text: str) -> tuple[int, list[Any]]:
    """(the pattern's groups, its matches in `text`), in at most REGEX_TIMEOUT_S: a pattern
    that backtracks, `((\\d|\\d)+)+x`, would otherwise hang the investigation on one line of
    output (the `regex` module, re's syntax with a timeout)."""
    import regex as timed_re

    try:
        compiled = timed_re.compile(pattern, timed_re.MULTILINE)
        return compiled.groups, list(compiled.finditer(text, timeout=REGEX_TIMEOUT_S))
    except timed_re.error as e:
        raise BenchError(f"bench.metric_regex {pattern!r} is not a valid regex: {e}") from None
    except TimeoutError:
        raise BenchError(
            f"bench.metric_regex {pattern!r} took over {REGEX_TIMEOUT_S:g} s on {len(text):,} "
            "characters of the bench's output: it backtracks (a repeat inside a repeat, such as "
            "(\\d+)+); match the number plainly, such as ([0-9.]+)"
        ) from None


def _from_regex(pattern: str, text: str) -> list[float]:
    groups, matches = _matches(pattern, text)
    values, unread = [], []
    for match in matches:
        raw = match.group(1) if groups else match.group(0)
        if isinstance(raw, str) and _COMMA_NUMBER.fullmatch(raw.strip()):
            raise BenchError(
                f"bench.metric_regex {pattern!r} read {raw.strip()!r}: a number written with a "
                "comma (thousands, or a decimal comma?), which is not guessed at: print it "
                "plainly, or match it without the comma"
            )
        try:
            values.append(float(raw))
        except (ValueError, TypeError):  # TypeError: an optional group that matched nothing
            unread.append(raw)
    words = [raw for raw in unread if raw is not None]  # None: an optional group, unmatched
    if words and not values:  # it matched, but never a number: the pattern, not the bench
        what = "group 1" if groups else "the whole match (it has no group)"
        raise BenchError(
            f"bench.metric_regex {pattern!r} matched {len(words)} time(s), but {what} read "
            f"{words[0][:40]!r}, not a number: put a group around the number"
        )
    if words:  # `N/A` for a failed request: leaving it out would count only the ones that worked
        raise BenchError(
            f"bench.metric_regex {pattern!r} read {words[0][:40]!r} in {len(words)} of "
            f"{len(words) + len(values)} matches, not a number: a request without a value is "
            "not left out silently; match only numbers (such as ([0-9.]+)) to leave them out"
        )
    return values


def _from_jsonl(node: Shell, path: PurePath) -> dict[str, list[float]]:
    """Every numeric key of the JSONL file's records, its values in record order."""
    series: dict[str, list[float]] = {}
    try:
        lines = node.read_text(path).splitlines()
    except NotAFile as e:
        raise BenchError(f"the bench's JSONL file {e}") from None
    except (OSError, ToolError) as e:
        raise BenchError(
            f"cannot read the bench's JSONL file {path}: {getattr(e, 'strerror', None) or e}"
        ) from None
    for line in lines:
        try:
            record = parse_json(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        for key, value in record.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                series.setdefault(str(key), []).append(float(value))
    return series


def _key_values(series: dict[str, list[float]], key: str, jsonl: PurePath) -> list[float]:
    """The metric's values, taken out of `series`; a file without them names what it holds."""
    values = series.pop(key, [])
    if not values:
        keys = ", ".join(sorted(series)[:6]) or "none"
        raise BenchError(
            f"the bench's JSONL file {jsonl} has no record with a number at {key!r} "
            f"(numeric keys in it: {keys})"
        )
    return values


def _unit(name: str) -> str:
    """A unit for a JSONL key beside the bench's metric, by the names benches use."""
    if name.endswith("_ms"):
        return "ms"
    if name.endswith("_s") and name != "tok_s":
        return "s"
    units = {"tok_s": "tok/s", "accept_len": "tokens", "accept_length": "tokens"}
    units |= {"output_throughput": "tok/s", "request_throughput": "req/s"}
    return units.get(name, "")


def _metric(name: str, unit: str, values: list[float]) -> Metric:
    return Metric(
        name=name,
        unit=unit,
        median=statistics.median(values),
        mean=statistics.fmean(values),
        samples=values,
        source="command",
    )


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
    base_url: str | None,
    port: int | None,
    log_path: Path,
    *,
    worktree: PurePath | None = None,
    config_dir: Path | None = None,
    command: str | None = None,
) -> BenchResult:
    """Run the bench command in `cwd` on `node` (or `command`, filled in already).

    `base_url` is the server as the node sees it (None without a server), `worktree` the
    scratch tree's root (default: `cwd`), `config_dir` the folder of debug-agent.toml.
    """
    places = Placeholders(node.python, worktree or cwd, config_dir, base_url, port)
    command = command or places.fill(bench.command or "")
    code, output = node.shell(command, cwd, env, bench.timeout_s)
    log_path.write_text(bounded_text(f"$ {command}\n{output}"))  # values: from all of it
    if code is None:
        raise BenchError(f"bench command timed out after {bench.timeout_s:g} s")
    if code != 0:
        last = output.strip().splitlines()[-1] if output.strip() else ""
        raise BenchError(f"bench command exited with {code}: {last}")
    series: dict[str, list[float]] = {}
    if bench.metric_jsonl and bench.metric_key and not bench.metric_regex:
        series = _from_jsonl(node, cwd / places.fill(bench.metric_jsonl))
        values = _key_values(series, bench.metric_key, cwd / places.fill(bench.metric_jsonl))
    else:
        values, series = _values(bench, output)
    if not values:
        raise BenchError(
            f"the bench command's output has no value for {bench.metric!r} (see {log_path})"
        )
    measured = [is_measurement(v) for v in values]  # NaN, inf, 0 or negative: never counted
    wrong = [v for v, ok in zip(values, measured, strict=True) if not ok]
    values = list(compress(values, measured)) if wrong else values
    if not values:
        raise BenchError(
            f"the bench command gave {bench.metric} = "
            f"{', '.join(f'{v:g}' for v in wrong[:3])}: not a measurement (a time or "
            f"rate is a number above zero, within 1e±100; see {log_path})"
        )
    # the records' other numbers ride along (a speculative bench's accept_len, verify_ms)
    metrics = {
        name: _metric(name, _unit(name), kept)
        for name, found in series.items()
        if name != bench.metric and (kept := [v for v in found if is_measurement(v)])
    }
    metrics[bench.metric] = _metric(bench.metric, bench.unit, values)
    return BenchResult(samples=[], metrics=metrics)


def _values(bench: BenchSection, output: str) -> tuple[list[float], dict[str, list[float]]]:
    """The metric's samples: by the regex, or from a result block in the output (SGLang's
    bench_serving, `vllm bench serve`, vLLM's benchmark_serving.py), whose other numbers (the
    acceptance length of a speculative run) ride along."""
    if bench.metric_regex:
        return _from_regex(bench.metric_regex, output), {}
    block = parse_bench_serving_block(output) or {}  # its row named by bench.metric
    if bench.metric not in block:
        raise BenchError(
            "a command bench needs bench.metric_regex, bench.metric_jsonl with "
            "bench.metric_key, or a bench_serving result block with "
            f"{bench.metric!r} (it printed: {', '.join(sorted(block)) or 'none'})"
        )
    others = {
        name: [float(value)]
        for name, value in block.items()
        if name != bench.metric and isinstance(value, int | float)
    }
    value = block[bench.metric]
    return ([float(value)] if isinstance(value, int | float) else []), others
