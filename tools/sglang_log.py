"""SGLang server logs and benchmark output, parsed into one typed result.

`parse_log(text)` never raises: garbage, binary decoded with errors="replace", empty input, huge
lines and any line ending give a result. What it reads (formats in shared/docs/sglang-facts.md):

- server_args: the startup dump, `server_args={...}` (0.5.23) or `server_args=ServerArgs(...)`;
  the first complete dump wins, else the first cut one (tools.server_args_dump).
- decode / prefill: every `Decode batch` / `Prefill batch` scheduler line (tools.sglang_log_batch).
- bench: the first `sglang.bench_serving` result block, else its first JSONL record
  (tools.bench_output).
- errors: tracebacks, NCCL failures, CUDA OOM, error-level lines (tools.sglang_log_errors).

Line numbers are 1-based and count lines as Python's universal newlines do (`\\r\\n`, `\\r`, `\\n`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from tools.bench_output import (
    bench_summary,
    parse_bench_jsonl,
    parse_bench_one_batch,
    parse_bench_serving_block,
)
from tools.server_args_dump import find_server_args
from tools.sglang_log_batch import parse_batch_line
from tools.sglang_log_errors import ErrorScanner
from tools.sglang_log_lines import LogLines, load_lines

__all__ = [
    "BenchSummary", "DecodeRecord", "ErrorRecord", "LogParse", "PrefillRecord",
    "parse_bench_jsonl", "parse_bench_one_batch", "parse_bench_serving_block", "parse_log",
    "parse_log_file",
]

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)


class _BatchRecord(BaseModel):
    # Lines carry fields the schema does not list (#token, pre-allocated usage, est. TFLOPS...):
    # they are kept as extra keys.
    model_config = ConfigDict(extra="allow")

    running_req: int | None = None
    queue_req: int | None = None
    token_usage: float | None = None
    cuda_graph: bool | None = None
    time: str | None = None
    tp_rank: int | None = None
    dp_rank: int | None = None
    line: int


class DecodeRecord(_BatchRecord):
    gen_throughput: float | None = None
    accept_len: float | None = None
    accept_rate: float | None = None
    token: int | None = None


class PrefillRecord(_BatchRecord):
    new_seq: int | None = None
    new_token: int | None = None
    cached_token: int | None = None
    input_throughput: float | None = None


class ErrorRecord(BaseModel):
    line: int
    kind: str  # traceback | nccl | oom | error
    message: str


class BenchSummary(BaseModel):
    output_throughput: float | None = None
    median_tpot_ms: float | None = None
    median_itl_ms: float | None = None
    median_ttft_ms: float | None = None
    request_throughput: float | None = None
    accept_length: float | None = None


class LogParse(BaseModel):
    server_args: dict[str, Any] | None = None
    decode: list[DecodeRecord] = []
    prefill: list[PrefillRecord] = []
    bench: BenchSummary | None = None
    errors: list[ErrorRecord] = []

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "server_args": self.server_args,
            "decode": [r.model_dump() for r in self.decode],
            "prefill": [r.model_dump() for r in self.prefill],
            "bench": self.bench.model_dump() if self.bench else None,
            "errors": [r.model_dump() for r in self.errors],
        }


def _guarded(part: Callable[[LogLines], T], lines: LogLines, empty: T) -> T:
    """One part of the parse; a bug in one part must not cost the others (never raises)."""
    try:
        return part(lines)
    except Exception:  # the contract is a result for any input
        return empty


def _record(model: type[R], fields: dict[str, Any]) -> R:
    # The batch parser has typed every value; validating (pydantic-core) is still the fastest
    # way to build the model, and model_construct is the fallback if a type ever slips.
    try:
        return model.model_validate(fields)
    except ValidationError:
        return model.model_construct(**fields)


def _batches(lines: LogLines) -> tuple[list[DecodeRecord], list[PrefillRecord]]:
    decode: list[DecodeRecord] = []
    prefill: list[PrefillRecord] = []
    for index, body in enumerate(lines.bodies):
        if " batch" not in body:  # cheap test first: most lines are not batch lines
            continue
        found = parse_batch_line(body, lines.outer_stamps.get(index))
        if found is None:
            continue
        kind, fields = found
        fields["line"] = index + 1
        if kind == "decode":
            decode.append(_record(DecodeRecord, fields))
        else:
            prefill.append(_record(PrefillRecord, fields))
    return decode, prefill


def _errors(lines: LogLines) -> list[ErrorRecord]:
    scanner = ErrorScanner()
    for index, body in enumerate(lines.bodies):
        scanner.feed(index, body, lines.sources[index])
    return [ErrorRecord(line=line, kind=kind, message=message)
            for line, kind, message in scanner.finish()]


def _bench(lines: LogLines) -> BenchSummary | None:
    summary = bench_summary(lines.bodies, lines.raw)
    return BenchSummary(**summary) if summary is not None else None


def parse_log(text: str) -> LogParse:
    """Everything this module reads from an SGLang log (or bench output); never raises."""
    try:
        lines = load_lines(text if isinstance(text, str) else str(text))
    except Exception:  # e.g. MemoryError on absurd input: an empty result
        return LogParse()
    decode, prefill = _guarded(_batches, lines, ([], []))
    return LogParse.model_construct(
        server_args=_guarded(lambda ls: find_server_args(ls.bodies), lines, None),
        decode=decode,
        prefill=prefill,
        bench=_guarded(_bench, lines, None),
        errors=_guarded(_errors, lines, []),
    )


def parse_log_file(path: Path) -> LogParse:
    """`parse_log` of a file's bytes decoded as UTF-8 with errors replaced (binary is fine)."""
    data = Path(path).read_bytes()  # FileNotFoundError propagates: the caller reports it
    return parse_log(data.decode("utf-8", errors="replace"))
