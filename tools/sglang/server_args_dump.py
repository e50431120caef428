"""The startup `server_args=` dump of an SGLang server, both formats.

SGLang writes it with `logger.info(f"{server_args=}")` (python/sglang/srt/entrypoints/engine.py);
examples in tests/fixtures/sglang_logs/14-* to 22-*.

- 0.5.23: `server_args={'model_path': '...', 'cuda_graph_config': {...}, ...}` (a dict repr).
- older: `server_args=ServerArgs(model_path='...', tp_size=8, ...)` (a dataclass repr).

The dump is one log record, but posted logs wrap it over several lines or cut it short: a dump
goes on over the lines that follow it until one begins a new record, and is read with
tools.sglang.server_args_repr (a cut item keeps its key with a null value). A log with no dump at
all may still hold a piece of one, cut at both ends (tools.sglang.server_args_fragment).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tools.sglang.log_lines import RECORD_START, SGLANG_BRACKET, log_lines
from tools.sglang.server_args_fragment import FragmentFinder
from tools.sglang.server_args_repr import ReprScanner, by_item, whole_repr

_START = re.compile(r"server_args\s*=\s*(\{)|\bServerArgs(\()")
_MAX_CONTINUATION_LINES = 400
_MAX_DUMPS = 50


class _DumpReader:
    """One dump, from the line it starts on through its wrapped continuation lines."""

    def __init__(self, index: int, body: str, m: re.Match[str]) -> None:
        self.index = index
        self.call = m.group(2) is not None
        # A paste that indents the whole log indents the wrapped lines alike: not the dump's.
        self.indent = body[: len(body) - len(body.lstrip())]
        self.scanner = ReprScanner(")" if self.call else "}")
        self.scanner.feed(body[m.end() :])
        self.follows = 0

    @property
    def done(self) -> bool:
        return self.scanner.closed or self.follows >= _MAX_CONTINUATION_LINES

    def feed(self, body: str) -> bool:
        """Whether the line continues the dump (it is taken then); a new record ends it."""
        if self.done or RECORD_START.match(body, 0, 200):
            self.follows = _MAX_CONTINUATION_LINES
            return False
        self.follows += 1
        if self.indent and body.startswith(self.indent):
            body = body[len(self.indent) :]
        self.scanner.feed(body)  # a hard wrap splits anywhere, even mid-token: join as is
        return True

    def result(self) -> dict[str, Any] | None:
        """The dump's keys (None when none could be read)."""
        scanner = self.scanner
        args = whole_repr("".join(scanner.inner), self.call) if scanner.closed else None
        if args is None:
            args = by_item(scanner, self.call)
        return args or None


def _is_log_record(before: str) -> bool:
    """False for a dump-like text inside source code (an indented traceback line, a string);
    an indented line is a record only behind SGLang's stamp (a paste that indents the log)."""
    if before[:1].isspace():
        before = before.lstrip()
        if not SGLANG_BRACKET.match(before):
            return False
    return not any(q in before for q in "'\"")


class ServerArgsFinder:
    """Fed line by line: the first complete dump; when every dump is cut, the first one; when
    there is no dump at all, the first fragment of one (tools.sglang.server_args_fragment)."""

    def __init__(self) -> None:
        self.open: list[_DumpReader] = []
        self.complete: tuple[int, dict[str, Any]] | None = None
        self.cut: tuple[int, dict[str, Any]] | None = None
        self.attempts = 0
        self.fragments = FragmentFinder()

    @property
    def settled(self) -> bool:
        """No later line can change the result."""
        return self.complete is not None and not any(r.index < self.complete[0] for r in self.open)

    def feed(self, index: int, body: str) -> None:
        if self.complete is not None and self.settled:
            return
        taken = False
        if self.open:
            for reader in self.open:
                taken = reader.feed(body) or taken
            for reader in [r for r in self.open if r.done]:
                self.open.remove(reader)
                self._settle(reader)
        if ("server_args" in body or "ServerArgs(" in body) and self._start(index, body):
            taken = True
        if taken:
            self.fragments.interrupt()
        elif self.complete is None:
            self.fragments.feed(body)

    def _start(self, index: int, body: str) -> bool:
        m = _START.search(body)
        if m is None or not _is_log_record(body[: m.start()]):
            return False
        self.attempts += 1
        if self.attempts > _MAX_DUMPS:
            return False  # each attempt may read hundreds of lines: bounded work
        reader = _DumpReader(index, body, m)
        if reader.done:
            self._settle(reader)
        else:
            self.open.append(reader)
        return True

    def _settle(self, reader: _DumpReader) -> None:
        args = reader.result()
        if args is None:
            return
        found = (reader.index, args)
        if reader.scanner.closed:  # readers end in any order: the earliest dump is kept
            if self.complete is None or reader.index < self.complete[0]:
                self.complete = found
        elif self.cut is None or reader.index < self.cut[0]:
            self.cut = found

    def result(self) -> dict[str, Any] | None:
        for reader in self.open:
            self._settle(reader)
        self.open = []
        for found in (self.complete, self.cut):
            if found is not None:
                return found[1]
        return self.fragments.result()


def find_server_args(bodies: Iterable[str]) -> dict[str, Any] | None:
    """The server_args of a log's lines (bodies: transport prefixes already removed)."""
    finder = ServerArgsFinder()
    for index, body in enumerate(bodies):
        finder.feed(index, body)
    return finder.result()


def parse_server_args(text: str) -> dict[str, Any] | None:
    """The server_args of a log's text (lines as read by tools.sglang.log_lines)."""
    return find_server_args(line.body for line in log_lines(text))
