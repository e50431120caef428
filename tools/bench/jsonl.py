"""bench_serving's JSON result records, wherever a log holds them.

SGLang's python/sglang/bench_serving.py writes them (`--output-file`); examples in
tests/fixtures/sglang_logs/25-bench-serving-jsonl-infinity.jsonl and 27-*.

bench_serving appends one JSON object a line to its `--output-file`; logs that users post hold
such records among other lines: alone, after a timestamp or a transport prefix, wrapped over
several lines by a terminal or an issue tracker, or pretty-printed. The prefill/decode
disaggregation variant adds keys (`server_info` per server, `pd_...`): only the summary keys at
the top level are read, and a summary value is a finite number or null.

A record cut short (a paste that ends inside it) gives the pairs before the cut: a value counts
only when the `,` or `}` after it was printed, so a number the cut shortened is never read. A
whole record wins over a cut one, and a cut one with no summary value is no record.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from tools.json_text import parse_json
from tools.sglang.log_lines import MAX_LINE_CHARS, RECORD_START

BENCH_KEYS = (
    "output_throughput",
    "median_tpot_ms",
    "median_itl_ms",
    "median_ttft_ms",
    "request_throughput",
    "accept_length",
)
# The names bench_serving wrote before its keys took their units (sglang 0.2, mid-2024): the same
# numbers, latencies already in ms; and vLLM's name for the acceptance length (`vllm bench serve
# --save-result`, 0.10+). A record has one name or the other.
_LEGACY_KEYS = {
    "output_throughput": "output_token_throughput",
    "median_ttft_ms": "median_ttft",
    "median_itl_ms": "median_itl",
    "accept_length": "spec_decode_acceptance_length",
}
# Keys only bench_serving writes (bench_one_batch_server also has `output_throughput`); a
# record has them all, so two of them tell it from a JSON line that has one by chance.
_SERVING_ONLY = (
    "request_throughput",
    "median_ttft_ms",
    "median_itl_ms",
    "median_tpot_ms",
    "completed",
    "duration",
    "median_ttft",
    "median_itl",
)
_QUOTED_KEYS = tuple(f'"{key}"' for key in _SERVING_ONLY)
_OBJECT_START = re.compile(r'\{\s*"|\{\s*$')
_KEY = re.compile(r'\s*"((?:[^"\\]|\\.){1,200})"\s*:\s*')
_AFTER_VALUE = re.compile(r"\s*([,}])")
_DECODER = json.JSONDecoder()
_MAX_STARTS = 4  # `{` positions tried on a line
_MAX_SPAN_LINES = 400  # a record wrapped or pretty-printed over lines
_MAX_SPAN_CHARS = 1 << 24


def finite(value: Any) -> Any:
    """JSON data with every non-finite float (Infinity, NaN) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def json_records(lines: list[str]) -> list[dict[str, Any]]:
    """Every line that is a JSON object by itself; non-finite numbers null."""
    records = []
    for line in lines:
        text = line.strip()
        if not text.startswith("{"):
            continue
        try:
            record = parse_json(text)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(finite(record))
    return records


def is_serving_record(record: dict[str, Any]) -> bool:
    return sum(key in record for key in _SERVING_ONLY) >= 2


def serving_summary(record: dict[str, Any]) -> dict[str, Any]:
    """The six summary fields of a bench_serving JSON record (numbers only)."""
    summary: dict[str, Any] = {}
    for key in BENCH_KEYS:
        value = record.get(key)
        if value is None and key in _LEGACY_KEYS:
            value = record.get(_LEGACY_KEYS[key])
        summary[key] = (
            float(value)
            if isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
            else None
        )
    return summary


def cut_record(text: str) -> dict[str, Any]:
    """The top-level pairs of a JSON object cut short, up to the last one known to be whole."""
    record: dict[str, Any] = {}
    at = text.find("{") + 1
    while at:
        key = _KEY.match(text, at)
        if key is None:
            break
        try:
            value, end = _DECODER.raw_decode(text, key.end())
        except (ValueError, RecursionError):
            break  # the cut fell in this value
        after = _AFTER_VALUE.match(text, end)
        if after is None:
            break  # the value ends the text: it may have been longer
        record[key.group(1)] = value
        at = after.end() if after.group(1) == "," else 0
    return record


def _depth(text: str) -> int:
    """Braces opened minus closed, strings not told apart: only says "maybe not closed yet"."""
    return text.count("{") - text.count("}")


class JsonRecordFinder:
    """Fed line by line: the summary of the first bench_serving record."""

    def __init__(self) -> None:
        self.found: dict[str, Any] | None = None
        self.cut: dict[str, Any] | None = None  # the first record cut short, if no whole one
        self.span: list[str] | None = None  # a record going on over lines
        self.depth = 0
        self.span_chars = 0

    def feed(self, body: str, raw: str) -> None:
        if self.found is not None:
            return
        if self.span is not None:
            if self._continue(body):
                return
            self._end_span()
        if "{" not in body:
            return
        # The body is capped in length; a record with `--output-details` can pass any cap.
        text = raw if len(body) >= MAX_LINE_CHARS else body
        for n, m in enumerate(_OBJECT_START.finditer(text)):
            if n >= _MAX_STARTS:
                break
            if self._take(text, m.start()):
                return

    def _take(self, text: str, start: int) -> bool:
        """Whether a record starts at `start` (read now, or over the next lines)."""
        if any(key in text for key in _QUOTED_KEYS):
            try:
                record, _ = _DECODER.raw_decode(text, start)
            except (ValueError, RecursionError):
                record = None
            if isinstance(record, dict):
                self._found(record)
                return self.found is not None
        depth = _depth(text[start:])
        if depth > 0:  # not closed on this line: wrapped, or pretty-printed
            self.span, self.depth, self.span_chars = [text[start:]], depth, len(text) - start
            return True
        return False

    def _continue(self, body: str) -> bool:
        """Whether the line goes on with the record being read (it is taken then)."""
        assert self.span is not None
        if body.lstrip()[:2] == '{"' or RECORD_START.match(body, 0, 200):
            return False  # another record, or another log line: the record was cut
        if len(self.span) >= _MAX_SPAN_LINES or self.span_chars + len(body) > _MAX_SPAN_CHARS:
            return False
        self.span.append(body)  # a hard wrap splits anywhere, even mid-token: join as is
        self.depth += _depth(body)
        self.span_chars += len(body)
        if self.depth > 0:
            return True
        try:
            record = parse_json("".join(self.span))
        except ValueError:
            self._end_span()  # closed, yet no whole object: read up to where it breaks
            return True
        self.span = None
        if isinstance(record, dict):
            self._found(record)
        return True

    def _found(self, record: dict[str, Any]) -> None:
        if is_serving_record(record):
            self.found = serving_summary(finite(record))

    def _end_span(self) -> None:
        """A record that went on over lines was cut: what it holds up to the cut."""
        span, self.span = self.span, None
        if span is None or self.cut is not None:
            return
        record = cut_record("".join(span))
        if is_serving_record(record):
            summary = serving_summary(finite(record))
            if any(value is not None for value in summary.values()):
                self.cut = summary  # a record cut before any summary value says nothing

    def result(self) -> dict[str, Any] | None:
        """The first whole record's summary, else the first cut one's."""
        self._end_span()
        return self.found or self.cut
