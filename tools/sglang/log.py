"""SGLang server logs and benchmark output, parsed into one typed result.

`parse_log(text)` never raises: garbage, binary decoded with errors="replace", empty input, huge
lines and any line ending give a result. What it reads (each format with the SGLang source that
writes it in the module named; examples in tests/fixtures/sglang_logs/ and tests/data/sglang-logs/):

- server_args: the startup dump, `server_args={...}` (0.5.23) or `server_args=ServerArgs(...)`;
  the first complete dump wins, else the first cut one, else the first piece of a dump cut at
  both ends (tools.sglang.server_args_dump, tools.sglang.server_args_fragment).
- decode / prefill: every `Decode batch` / `Prefill batch` scheduler line (tools.sglang.log_batch).
- bench: the first `sglang.bench_serving` result block, else its first JSON record (on a line of
  its own or not, wrapped or pretty-printed), else a block's tail (tools.bench.output,
  tools.bench.jsonl).
- errors: tracebacks, NCCL failures, CUDA OOM, error-level lines (tools.sglang.log_errors).

Lines may come behind a transport's prefix (docker-compose, Ray, kubectl, journald:
tools.sglang.log_lines) or wrapped by a container runtime (docker json-file, CRI:
tools.sglang.log_docker). Line numbers are 1-based lines of the input, counted as Python's
universal newlines do (`\\r\\n`, `\\r`, `\\n`); the lines a container record holds share its number.

The input is read one line at a time (parse_log_file never holds the file): each part keeps what
it found and, for the parts that read over several lines (a wrapped dump, a bench block, a
traceback), a bounded window of lines.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from tools.bench.output import (
    BenchFinder,
    parse_bench_jsonl,
    parse_bench_one_batch,
    parse_bench_serving_block,
)
from tools.log_file import open_log
from tools.server_facts import ServerFacts
from tools.sglang.log_batch import parse_batch_line
from tools.sglang.log_errors import ErrorScanner
from tools.sglang.log_lines import LogLine, file_lines, read_lines, text_lines
from tools.sglang.server_args_dump import ServerArgsFinder

__all__ = [
    "BenchSummary",
    "DecodeRecord",
    "ErrorRecord",
    "LogParse",
    "PrefillRecord",
    "parse_bench_jsonl",
    "parse_bench_one_batch",
    "parse_bench_serving_block",
    "parse_log",
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
    server: ServerFacts | None = None  # which server, and what it says of itself

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "server": self.server.model_dump() if self.server else None,
            "server_args": self.server_args,
            "decode": [r.model_dump() for r in self.decode],
            "prefill": [r.model_dump() for r in self.prefill],
            "bench": self.bench.model_dump() if self.bench else None,
            "errors": [r.model_dump() for r in self.errors],
        }

    def write_json(
        self, out: TextIO, transform: Callable[[Any], Any] = lambda value: value
    ) -> None:
        """The text of `json.dumps(transform(self.to_json_dict()), indent=2)`, written one
        record at a time: a long log's records are held once, not again as dicts and as one
        string. `transform` (secret masking, say) must treat a list item by item."""
        parts: list[tuple[str, Any]] = [
            ("server", self.server.model_dump() if self.server else None),
            ("server_args", self.server_args),
            ("decode", self.decode),
            ("prefill", self.prefill),
            ("bench", self.bench.model_dump() if self.bench else None),
            ("errors", self.errors),
        ]
        out.write("{")
        for n, (key, value) in enumerate(parts):
            out.write(("," if n else "") + f"\n  {json.dumps(key)}: ")
            if not isinstance(value, list):
                out.write(_indented(transform(value), 1))
                continue
            for m, record in enumerate(value):
                text = _indented(transform(record.model_dump()), 2)
                out.write(("," if m else "[") + "\n    " + text)
            out.write("\n  ]" if value else "[]")
        out.write("\n}")


def _indented(value: Any, depth: int) -> str:
    # JSON text has no raw newline inside a string: every newline is json's own indentation.
    return json.dumps(value, indent=2).replace("\n", "\n" + "  " * depth)


class _Reader:
    """The parts of the parse, fed one line at a time: what each keeps is bounded by the records
    it finds, not by the input (lines that a part looks back or ahead over are bounded too)."""

    def __init__(self) -> None:
        self.decode: list[DecodeRecord] = []
        self.prefill: list[PrefillRecord] = []
        self.errors = ErrorScanner()
        self.server_args = ServerArgsFinder()
        self.bench = BenchFinder()
        # A bug in one part must not cost the others: a part that raised is left out from then
        # on, and its result is empty.
        self.failed: set[str] = set()
        self.last_time: str | None = None

    def feed(self, line: LogLine) -> None:
        # One try per part, written out: this runs for every line of the log.
        body, failed = line.body, self.failed
        if " batch" in body and "batches" not in failed:  # most lines are not batch lines
            try:
                self._batch(line)
            except Exception:  # the contract is a result for any input
                failed.add("batches")
        if "errors" not in failed:
            try:
                self.errors.feed(line.index, body, line.source, line.number)
            except Exception:
                failed.add("errors")
        if "server_args" not in failed:
            try:
                self.server_args.feed(line.index, body)
            except Exception:
                failed.add("server_args")
        if "bench" not in failed:
            try:
                self.bench.feed(body, line.raw)
            except Exception:
                failed.add("bench")

    def _batch(self, line: LogLine) -> None:
        found = parse_batch_line(line.body, line.stamp)
        if found is None:
            return
        kind, fields = found
        fields["line"] = line.number
        if fields["time"] == self.last_time:
            fields["time"] = self.last_time  # one string for the lines of one second
        self.last_time = fields["time"]
        if kind == "decode":
            self.decode.append(_record(DecodeRecord, fields))
        else:
            self.prefill.append(_record(PrefillRecord, fields))

    def _result(self, part: str, finish: Callable[[], T], empty: T) -> T:
        if part in self.failed:
            return empty
        try:
            return finish()
        except Exception:  # as in feed
            return empty

    def finish(self) -> LogParse:
        return LogParse.model_construct(
            server_args=self._result("server_args", self.server_args.result, None),
            decode=self._result("batches", lambda: self.decode, []),
            prefill=self._result("batches", lambda: self.prefill, []),
            bench=self._result("bench", self._bench, None),
            errors=self._result("errors", self._errors, []),
        )

    def _bench(self) -> BenchSummary | None:
        summary = self.bench.summary()
        return BenchSummary(**summary) if summary is not None else None

    def _errors(self) -> list[ErrorRecord]:
        return [
            ErrorRecord(line=line, kind=kind, message=message)
            for line, kind, message in self.errors.finish()
        ]


# Records with the same keys share one set of "fields set": pydantic-core gives every instance
# a set of its own (about 700 bytes, more than the record's values), and a long log holds
# hundreds of thousands of records. Nothing assigns to a record after the parse.
_FIELDS_SETS: dict[tuple[str, ...], set[str]] = {}


def _record(model: type[R], fields: dict[str, Any]) -> R:
    # The batch parser has typed every value; validating (pydantic-core) is still the fastest
    # way to build the model, and model_construct is the fallback if a type ever slips.
    try:
        record = model.model_validate(fields)
    except ValidationError:
        return model.model_construct(**fields)
    key = (model.__name__, *fields)
    shared = _FIELDS_SETS.get(key)
    if shared is None:
        if len(_FIELDS_SETS) >= 4096:  # bounded, whatever keys hostile input invents
            return record
        shared = _FIELDS_SETS[key] = set(record.__pydantic_fields_set__)
    object.__setattr__(record, "__pydantic_fields_set__", shared)
    return record


def _parse(raw_lines: Iterable[str]) -> LogParse:
    reader = _Reader()
    try:
        for line in read_lines(raw_lines):
            reader.feed(line)
    except OSError:
        raise  # reading the file failed: the caller reports it
    except Exception:  # a line too big to hold, say: what came before it is the result
        pass
    return reader.finish()


def parse_log(text: str) -> LogParse:
    """Everything this module reads from an SGLang log (or bench output); never raises."""
    try:
        return _parse(text_lines(text if isinstance(text, str) else str(text)))
    except Exception:  # e.g. MemoryError on absurd input: an empty result
        return LogParse()


def parse_log_file(path: Path) -> LogParse:
    """`parse_log` of a file's bytes decoded as UTF-8 with errors replaced (binary is fine),
    read line by line: memory holds the records found and a few lines, not the file."""
    # open() raises FileNotFoundError here, before any parsing: the caller reports it.
    with open_log(path) as stream:
        return _parse(file_lines(stream))
