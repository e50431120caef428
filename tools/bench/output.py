"""Parsers for SGLang benchmark output (SGLang's python/sglang/bench_serving.py and
bench_one_batch_server.py; examples in tests/fixtures/sglang_logs/23-* to 28-*).

- `python -m sglang.bench_serving`: the `Serving Benchmark Result` block (rows `{:<40} {:<10}`,
  sections under `-----` headings, older label variants), a block's tail without its header (the
  rows a paste kept, up to the closing `=====`), and its JSON records (tools.bench.jsonl).
- `python -m sglang.bench_one_batch_server`: per-case lines and JSONL records.

Rows are matched by label, never by position, so older layouts (no `Backend:` row, the
`Max reqeuest concurrency:` typo, no TPOT section, Mean/Median/P99 only) read the same.
`Peak output token throughput` is a different number from `Output token throughput`. A log's
summary is the first complete block, else the first block, else the first JSON record, else the
first tail; what a tail lacks is null.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from tools.bench.jsonl import BENCH_KEYS, JsonRecordFinder, json_records
from tools.sglang.log_lines import log_lines, sglang_message

_HEADER = "Serving Benchmark Result"
_ROW = re.compile(r"([^:]{1,100}):\s+(\S.*)")
_HEADING = re.compile(r"-{3,}[^:]*-{3,}")  # `-----Time to First Token-----`
_MAX_BLOCK_LINES = 120
# Row labels only bench_serving (and vLLM's benchmark_serving, same layout) prints: a run of
# them without the header above is the tail of a block.
_BENCH_LABEL = re.compile(
    r"(?:mean|median|std|p\d{1,2}(?:\.\d+)?|max|min) (?:e2e latency|ttft|tpot|itl) \(ms\)"
    r"|(?:request|input token|output token|total token|peak output token) throughput"
    r" \((?:req|tok)/s\)|successful requests|benchmark duration \(s\)|total input tokens"
    r"|total input text tokens|total generated tokens(?: \(retokenized\))?|traffic request rate"
    r"|max re\w{3,5} concurrency|peak concurrent requests|concurrency|accept length"
    r"|acceptance rate \(%\)|acceptance length|drafts|draft tokens|accepted tokens"  # vLLM
)
_MIN_TAIL_ROWS = 2
# What a tail's first row holds: a cheap test first, as most lines hold none of it.
_TAIL_START = re.compile(r"\(m?s\)|/s\)|Accept len|Acceptance (?:rate|length)")

_ONE_BATCH_LABELS = {
    "batch size": "batch_size",
    "input_len": "input_len",
    "output_len": "output_len",
    "latency": "latency",
    "input throughput": "input_throughput",
    "output throughput": "output_throughput",
    "overall throughput": "overall_throughput",
    "(input + output) throughput": "overall_throughput",
    "last_ttft": "last_ttft",
    "last generation throughput": "last_gen_throughput",
    "acc_length": "acc_length",
}
_ONE_BATCH_ROW = re.compile(r"\s*([a-z_ ()+]{3,40}):\s*(\S+)")
_ONE_BATCH_KEYS = frozenset({"batch_size", "latency"})


def number(text: str) -> float | None:
    """The leading number of a printed value; None for `inf`, `nan`, `N/A`, `not set`."""
    token = text.split(None, 1)[0] if text.strip() else ""
    try:
        value = float(token.rstrip("%"))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _label(text: str) -> str:
    return " ".join(text.lower().split())


def _field(label: str) -> str | None:
    """Which summary field a result row feeds, by its label."""
    name = _label(label)
    if name.startswith("peak"):
        return None
    if name.startswith(("output token throughput", "output throughput")):
        return "output_throughput"
    if name.startswith("request throughput"):
        return "request_throughput"
    if name.startswith(("accept len", "acceptance length")):  # SGLang's, vLLM's
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


def _row_text(body: str) -> str:
    """A row as bench_serving printed it: a timestamp or a quoting `#` / `>` in front removed."""
    _, _, message = sglang_message(body.strip())
    return message.lstrip("#> \t").rstrip()


class _Block:
    """A result block from its header (or, for a tail, its first row) to its closing `=====`."""

    def __init__(self, headed: bool) -> None:
        self.headed = headed
        self.summary: dict[str, Any] = dict.fromkeys(BENCH_KEYS)
        self.rows = 0  # rows read (a tail counts only bench_serving's own labels)
        self.lines = 0
        self.done = False
        self.complete = False

    def feed(self, text: str) -> None:
        self.lines += 1
        if len(text) >= 10 and set(text) == {"="}:
            self.done, self.complete = True, self.rows > 0
            return
        m = _ROW.fullmatch(text)
        label = _label(m.group(1)) if m else ""
        if m and (self.headed or _BENCH_LABEL.fullmatch(label)):
            self.rows += 1
            name = _field(label)
            if name and self.summary[name] is None:
                self.summary[name] = number(m.group(2))
        elif not self.headed and not _HEADING.fullmatch(text):
            self.done = True  # a tail ends at the first line that is no row of it
        if self.lines >= _MAX_BLOCK_LINES:
            self.done = True


class BenchFinder:
    """Fed line by line: the bench_serving summary of a log (see the module's docstring)."""

    def __init__(self) -> None:
        self.block: _Block | None = None
        self.complete: dict[str, Any] | None = None
        self.cut: dict[str, Any] | None = None
        self.tail: _Block | None = None
        self.first_tail: dict[str, Any] | None = None
        self.json = JsonRecordFinder()

    def feed(self, body: str, raw: str | None = None) -> None:
        if self.complete is not None:
            return
        if _HEADER in body:
            self._end_block()
            self.block = _Block(headed=True)
            return
        if self.block is not None:
            self.block.feed(_row_text(body))
            if self.block.done:
                self._end_block()
            return
        if self.cut is not None:
            return  # only a complete block can change the result now
        self.json.feed(body, body if raw is None else raw)
        if self.first_tail is None and (self.tail is not None or _TAIL_START.search(body)):
            self._feed_tail(_row_text(body))

    def _feed_tail(self, text: str) -> None:
        if self.tail is None:
            m = _ROW.fullmatch(text)
            if m is None or not _BENCH_LABEL.fullmatch(_label(m.group(1))):
                return
            self.tail = _Block(headed=False)
        self.tail.feed(text)
        if self.tail.done:
            self._end_tail()

    def _end_tail(self) -> None:
        tail, self.tail = self.tail, None
        # Rows of bench_serving's own labels, ending at its closing rule or giving a value.
        if (
            tail is not None
            and tail.rows >= _MIN_TAIL_ROWS
            and (tail.complete or any(v is not None for v in tail.summary.values()))
        ):
            self.first_tail = tail.summary

    def _end_block(self) -> None:
        block, self.block = self.block, None
        if block is None:
            return
        if block.complete:
            self.complete = block.summary
        elif self.cut is None:
            self.cut = block.summary

    def block_summary(self) -> dict[str, Any] | None:
        """The first complete block, else the first one; None when there is no block."""
        self._end_block()
        return self.complete or self.cut

    def summary(self) -> dict[str, Any] | None:
        """The block's summary, else the JSON record's, else the tail's; None when none."""
        self._end_tail()
        return self.block_summary() or self.json.result() or self.first_tail


def _finder(text: str) -> BenchFinder:
    finder = BenchFinder()
    for line in log_lines(text):
        finder.feed(line.body, line.raw)
    return finder


def parse_bench_serving_block(text: str) -> dict[str, Any] | None:
    """The summary of the first complete result block (else the first one); None when absent."""
    return _finder(text).block_summary()


def parse_bench_jsonl(text: str) -> list[dict[str, Any]]:
    """Every JSON object line of a JSONL file; bad lines skipped, non-finite numbers null."""
    return json_records(text.splitlines())


def bench_summary(bodies: Iterable[str]) -> dict[str, Any] | None:
    """The bench summary of a log's lines (bodies: transport prefixes already removed)."""
    finder = BenchFinder()
    for body in bodies:
        finder.feed(body)
    return finder.summary()


def parse_bench_one_batch(text: str) -> list[dict[str, Any]]:
    """bench_one_batch_server cases: from its per-case lines, then from its JSONL records."""
    lines = [line.body for line in log_lines(text)]
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
    jsonl = [r for r in json_records(lines) if r.keys() >= _ONE_BATCH_KEYS]
    return cases + jsonl
