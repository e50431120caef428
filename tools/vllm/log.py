"""A vLLM server's log (and `vllm bench serve` output), parsed into the same typed result as an
SGLang log: the throughput stats lines as decode records, the bench summary, the errors, and
the server's facts (tools.server_facts) with vLLM's own in `details`: the startup facts
(tools.vllm.startup) and the speculative-decoding metrics (tools.vllm.metrics). Never raises.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

from tools.bench.output import BenchFinder
from tools.log_file import open_log
from tools.server_facts import ServerFacts, Speculative
from tools.sglang.log import BenchSummary, DecodeRecord, ErrorRecord, LogParse
from tools.sglang.log_errors import ErrorScanner, is_exception_line
from tools.sglang.log_lines import LogLine, file_lines, read_lines, text_lines
from tools.vllm.args import speculative_config
from tools.vllm.log_lines import VllmLine, vllm_line
from tools.vllm.metrics import SpecDecodeRecord, spec_decode_record, stats_fields
from tools.vllm.startup import StartupReader, VllmStartup

MAX_RECORDS = 1 << 20  # stats lines kept: bounded whatever the input


def speculative(startup: VllmStartup) -> Speculative | None:
    """The speculative decoding the engine config (else the arguments) shows."""
    config = speculative_config((startup.config or {}).get("speculative_config"))
    if config is None:
        config = speculative_config((startup.args or {}).get("speculative_config"))
    if not config:
        return None
    tokens = config.get("num_spec_tokens", config.get("num_speculative_tokens"))
    draft = config.get("model", config.get("draft_model"))  # V0 says draft_model='[ngram]'
    method = config.get("method") or ("ngram" if draft == "[ngram]" else None)
    return Speculative.of(method, draft if draft != "[ngram]" else None, tokens)


class _Reader:
    def __init__(self) -> None:
        self.startup = StartupReader()
        self.decode: list[DecodeRecord] = []
        self.spec: list[SpecDecodeRecord] = []
        self.errors = ErrorScanner()
        self.bench = BenchFinder()
        self.tracing: set[str] = set()  # processes inside a traceback
        self.spec_tokens: int | None = None

    def feed_all(self, raw_lines: Iterable[str]) -> None:
        # a line is read once the next one began: the last line of an input that does not end
        # with a newline may have been cut, and what ends it is not read as a value
        pending: LogLine | None = None
        for line in read_lines(raw_lines):
            if pending is not None:
                self.feed(pending, cut=False)
            pending = line
        if pending is not None:
            self.feed(pending, cut=bool(pending.raw))

    def feed(self, line: LogLine, cut: bool) -> None:
        parts = vllm_line(line)
        # one part's bug must not cost the others their result
        with contextlib.suppress(Exception):
            self.startup.feed(parts, cut)
        with contextlib.suppress(Exception):
            self._metrics(parts)
        with contextlib.suppress(Exception):
            self._errors(line.index, parts, line.body)
        with contextlib.suppress(Exception):
            self.bench.feed(line.body, line.raw)

    def _errors(self, index: int, line: VllmLine, body: str) -> None:
        """vLLM prefixes every line of a traceback with its level and place: the scanner gets
        the bare message inside one, so that it reads the traceback as one record."""
        process, message = line.process, line.message
        if line.level not in ("ERROR", "CRITICAL"):
            self.errors.feed(index, body, process, line.number)
            return
        if message.startswith("Traceback (most recent call last)"):
            self.tracing.add(process)
        if process in self.tracing:
            self.errors.feed(index, message, process, line.number)
            if is_exception_line(message):
                self.tracing.discard(process)
            return
        self.errors.feed(index, f"{line.level} {message}", process, line.number)

    def _metrics(self, line: VllmLine) -> None:
        message = line.message
        if len(self.decode) + len(self.spec) >= MAX_RECORDS:
            return
        fields = stats_fields(message)
        if fields is not None:
            self.decode.append(DecodeRecord(line=line.number, time=line.time, **fields))
            return
        if "SpecDecoding" not in message:
            return
        facts = self.startup.facts
        record = spec_decode_record(line.number, message, self._spec_tokens(), facts.version)
        if record is not None:
            self.spec.append(record)

    def _spec_tokens(self) -> int | None:
        """Tokens per draft, read once the engine config (or the arguments) showed them: the
        first shown wins, so it is not read again for every metrics line."""
        if self.spec_tokens is None:
            spec = speculative(self.startup.facts)
            self.spec_tokens = spec.num_tokens if spec else None
        return self.spec_tokens

    def finish(self) -> LogParse:
        facts = self.startup.facts
        summary = self.bench.summary()
        return LogParse.model_construct(
            server_args=facts.args,
            decode=self.decode,
            prefill=[],
            bench=BenchSummary(**summary) if summary is not None else None,
            errors=[ErrorRecord(line=n, kind=k, message=m) for n, k, m in self.errors.finish()],
            server=ServerFacts(
                server="vllm",
                version=facts.version,
                args=facts.args,
                args_line=facts.args_line,
                architectures=facts.architectures,
                attention=facts.decoder_backends(),
                speculative=speculative(facts),
                details={
                    "startup": facts.model_dump(),
                    "spec_decode": [r.model_dump() for r in self.spec],
                },
            ),
        )


def _parse(raw_lines: Iterable[str]) -> LogParse:
    reader = _Reader()
    try:
        reader.feed_all(raw_lines)
    except OSError:
        raise
    except Exception:  # a line too big to hold, say: what came before it is the result
        pass
    try:
        return reader.finish()
    except Exception:  # the contract is a result for any input
        return LogParse(server=ServerFacts(server="vllm"))


def parse_vllm_log(text: str) -> LogParse:
    """Everything this module reads from a vLLM log; never raises."""
    try:
        return _parse(text_lines(text if isinstance(text, str) else str(text)))
    except Exception:
        return LogParse(server=ServerFacts(server="vllm"))


def parse_vllm_log_file(path: Path) -> LogParse:
    with open_log(path) as stream:
        return _parse(file_lines(stream))
