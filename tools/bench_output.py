"""Parsers for SGLang benchmark output (sglang-facts.md §7).

- `python -m sglang.bench_serving`: the `Serving Benchmark Result` block (rows `{:<40} {:<10}`,
  sections under `-----` headings, older label variants) and its JSONL records.
- `python -m sglang.bench_one_batch_server`: per-case lines and JSONL records.

Rows are matched by label, never by position, so older layouts (no `Backend:` row, the
`Max reqeuest concurrency:` typo, no TPOT section, Mean/Median/P99 only) read the same.
`Peak output token throughput` is a different number from `Output token throughput`.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from tools.sglang_log_lines import load_lines

BENCH_KEYS = ("output_throughput", "median_tpot_ms", "median_itl_ms", "median_ttft_ms",
              "request_throughput", "accept_length")
_HEADER = "Serving Benchmark Result"
_ROW = re.compile(r"([^:]{1,100}):\s+(\S.*)")
_MAX_BLOCK_LINES = 120
# Keys only bench_serving writes (bench_one_batch_server also has `output_throughput`).
_SERVING_ONLY = ("request_throughput", "median_ttft_ms", "median_itl_ms", "median_tpot_ms",
                 "completed", "duration")

_ONE_BATCH_LABELS = {
    "batch size": "batch_size", "input_len": "input_len", "output_len": "output_len",
    "latency": "latency", "input throughput": "input_throughput",
    "output throughput": "output_throughput", "overall throughput": "overall_throughput",
    "(input + output) throughput": "overall_throughput", "last_ttft": "last_ttft",
    "last generation throughput": "last_gen_throughput", "acc_length": "acc_length",
}
_ONE_BATCH_ROW = re.compile(r"\s*([a-z_ ()+]{3,40}):\s*(\S+)")
_ONE_BATCH_KEYS = frozenset({"batch_size", "latency"})


def finite(value: Any) -> Any:
    """JSON data with every non-finite float (Infinity, NaN) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def number(text: str) -> float | None:
    """The leading number of a printed value; None for `inf`, `nan`, `N/A`, `not set`."""
    token = text.split(None, 1)[0] if text.strip() else ""
    try:
        value = float(token.rstrip("%"))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _field(label: str) -> str | None:
    """Which summary field a result row feeds, by its label."""
    name = " ".join(label.lower().split())
    if name.startswith("peak"):
        return None
    if name.startswith(("output token throughput", "output throughput")):
        return "output_throughput"
    if name.startswith("request throughput"):
        return "request_throughput"
    if name.startswith("accept len"):
        return "accept_length"
    if not name.startswith("median") or "(ms)" not in name:
        return None
    if "ttft" in name or "first token" in name:
        return "median_ttft_ms"
    if "tpot" in name or "per output token" in name:
        return "median_tpot_ms"
    if "itl" in name or "inter-token" in name or "inter token" in name:
        return "median_itl_ms"
    return None


def _read_block(lines: list[str], start: int) -> tuple[dict[str, Any], bool]:
    """(summary, complete) of the block whose header is line `start`."""
    summary: dict[str, Any] = dict.fromkeys(BENCH_KEYS)
    seen_row = False
    for line in lines[start + 1:start + 1 + _MAX_BLOCK_LINES]:
        text = line.strip()
        if _HEADER in text:
            break
        if len(text) >= 10 and set(text) == {"="}:
            return summary, seen_row
        m = _ROW.fullmatch(text)
        if m is None:
            continue
        seen_row = True
        name = _field(m.group(1))
        if name and summary[name] is None:
            summary[name] = number(m.group(2))
    return summary, False


def first_block(lines: list[str]) -> dict[str, Any] | None:
    """The summary of the first complete result block, else of the first (cut) one."""
    blocks = [_read_block(lines, i) for i, line in enumerate(lines) if _HEADER in line]
    for summary, complete in blocks:
        if complete:
            return summary
    return blocks[0][0] if blocks else None


def parse_bench_serving_block(text: str) -> dict[str, Any] | None:
    """The summary of the first complete result block (else the first one); None when absent."""
    return first_block(load_lines(text).bodies)


def _json_records(lines: list[str]) -> list[dict[str, Any]]:
    records = []
    for line in lines:
        text = line.strip()
        if not text.startswith("{"):
            continue
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            records.append(finite(record))
    return records


def parse_bench_jsonl(text: str) -> list[dict[str, Any]]:
    """Every JSON object line of a JSONL file; bad lines skipped, non-finite numbers null."""
    return _json_records(text.splitlines())


def is_serving_record(record: dict[str, Any]) -> bool:
    return any(key in record for key in _SERVING_ONLY)


def serving_summary(record: dict[str, Any]) -> dict[str, Any]:
    """The six summary fields of a bench_serving JSONL record (numbers only)."""
    summary: dict[str, Any] = {}
    for key in BENCH_KEYS:
        value = record.get(key)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        summary[key] = float(value) if ok and math.isfinite(value) else None
    return summary


def bench_summary(lines: list[str], raw: list[str] | None = None) -> dict[str, Any] | None:
    """A log's bench summary: the first complete result block, else the first block, else the
    first bench_serving JSONL record in the text; None when there is no bench output.

    `raw` holds the uncut lines: a JSONL record with `--output-details` can pass any length cap.
    """
    summary = first_block(lines)
    if summary is not None:
        return summary
    candidates = []
    for index, line in enumerate(lines):
        if line.lstrip().startswith("{") and any(f'"{key}"' in line for key in _SERVING_ONLY):
            uncut = raw[index] if raw is not None and index < len(raw) else line
            candidates.append(uncut if uncut.lstrip().startswith("{") else line)
    for record in _json_records(candidates):
        if is_serving_record(record):
            return serving_summary(record)
    return None


def parse_bench_one_batch(text: str) -> list[dict[str, Any]]:
    """bench_one_batch_server cases: from its per-case lines, then from its JSONL records."""
    lines = load_lines(text).bodies
    cases: list[dict[str, Any]] = []
    for line in lines:
        m = _ONE_BATCH_ROW.match(line)
        key = _ONE_BATCH_LABELS.get(m.group(1).strip()) if m else None
        if m is None or key is None:
            continue
        if key == "batch_size" or not cases:
            cases.append({})
        value = number(m.group(2))
        if key in ("batch_size", "input_len", "output_len") and value is not None:
            value = int(value)
        cases[-1].setdefault(key, value)
    jsonl = [r for r in _json_records(lines) if r.keys() >= _ONE_BATCH_KEYS]
    return cases + jsonl
