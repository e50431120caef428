"""Errors in an SGLang log: Python tracebacks, NCCL failures, CUDA OOM and error-level lines.

One record per printed traceback, chained ones (`During handling of the above exception`)
included, with the final exception line as its message. Several ranks often crash at once: each
line is routed by its transport source (Ray actor, docker service, torchrun rank) and SGLang rank
tag, and tracebacks whose headers arrive together are matched with exception lines first in,
first out. A traceback cut before its exception line keeps its header as message. One whose header
was cut off is read from its frames: its exception line sits two columns left of them, wherever a
paste put them (a log indented as a block, a logger that indents what it prints).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tools.sglang.log_lines import sglang_message

_MAX_MESSAGE = 2000
_IDLE_LIMIT = 40  # unrelated lines a traceback without its exception line may wait through
_ABSORB_LIMIT = 10  # lines after an exception line that may continue its message
_MAX_OPEN = 16  # tracebacks of one source interleaving at once (the ranks of a node)
_FRAME_GAP = 4  # lines from a frame to its traceback's exception line (source, carets between)
_MAX_SOURCES = 64  # sources whose last line (or last headerless frame) is remembered

# Substrings one of which every line the scanner reports contains: `in` tests are several times
# faster than one regex alternation, and most lines of a log fail them all.
_PREFILTER = (
    "Traceback",
    "rror",
    "RROR",
    "NCCL",
    "nccl",
    "out of memory",
    "xception",
    "CRITICAL",
    "FATAL",
    "Fatal",
    "sigquit",
    "fault",
    "is dead",
    "failed",
    "OUT_OF_MEMORY",
)
_NCCL = re.compile(
    r"NCCL [Ee]rror|NCCL WARN|\bnccl[A-Z]\w*Error\b|Watchdog caught collective operation timeout"
    r"|NCCL communicator was aborted|NCCL timeout"
)
_OOM = re.compile(
    r"CUDA out of memory|HIP out of memory|OutOfMemoryError|CUDA error: out of memory"
    r"|CUDA_ERROR_OUT_OF_MEMORY"
)
_WARNING = re.compile(
    r"(?:WARNING|WARN)\b|\[?W\d{3,4} |[^\s:]*:\d+: \w*Warning\b|\w*Warning: |.{0,40}\| WARNING\b"
)
_ERROR = re.compile(
    r"\[?(?:ERROR|CRITICAL|FATAL)\b|.{0,60}?(?:[\s|\]-])(?:ERROR|CRITICAL|FATAL)(?:[\s|:\]-])"
    r"|E[A-Z]\d{4}: "  # Ascend CANN's error codes: `EZ9999: Inner Error!`, `EH9999: ...`
    r"|\[?[EF]\d{3,4} \d\d:\d\d:\d\d"
    r"|(?:[A-Za-z_]\w*\.){0,6}(?:[A-Z]\w*)?(?:Error|Exception)\b"
    r"|.{0,200}?(?:hit an exception|Received sigquit from a child process"
    r"|Fatal Python error|Segmentation fault|CUDA error: |Child process unexpectedly failed"
    r"|scheduler is dead|Exception in ASGI application|Health check failed)"
)
_EXCEPTION_LINE = re.compile(r"(?:[A-Za-z_]\w*\.){0,8}[A-Z]\w*[a-z]\w*(?::(?: |$)|$)")
# A traceback's frame line; the indented line below one is source code, never a record, even
# when the traceback's header was cut off: `    raise RuntimeError(f"NCCL error: {e}")`.
_FRAME = re.compile(r'\s+File "[^"\n]*", line \d+')
_CHAIN = ("During handling of the above exception", "The above exception was the direct cause")
_HEADER = "Traceback (most recent call last)"


@dataclass
class _Line:
    message: str  # SGLang's `[ts tags] ` removed
    tags: str
    stamped: bool  # carries SGLang's timestamp
    contiguous: bool  # the line above was taken by a traceback of the same source


@dataclass
class _Traceback:
    line: int
    tags: str
    header: str
    message: str | None = None
    earlier: str | None = None  # the exception line before a chain marker
    chained: bool = False  # a chain marker was seen after the last exception line
    lines_seen: int = 0
    idle: int = 0
    absorbed: int = 0
    indent: str = ""  # the header's own indentation: a paste that indents every line

    def dedented(self, message: str) -> str:
        """The line as the traceback printed it, the paste's indentation removed."""
        return message[len(self.indent) :] if message.startswith(self.indent) else message


def _may_report(body: str) -> bool:
    if body[:2] in ("[E", "[F") or body[:1] in ("E", "F"):  # glog's E1023 / F1023 stamps
        return True
    for marker in _PREFILTER:  # noqa: SIM110 - a plain loop is the fastest form here
        if marker in body:
            return True
    return False


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _clip(text: str) -> str:
    return text.strip()[:_MAX_MESSAGE]


def classify(message: str) -> str | None:
    """The kind of a single line outside a traceback: nccl, oom, error, or None."""
    if _NCCL.search(message):
        return "nccl"
    if _WARNING.match(message):
        return None  # warnings are not errors, unless they are NCCL WARN (above)
    if _OOM.search(message):
        return "oom"
    return "error" if _ERROR.match(message) else None


def is_exception_line(message: str) -> bool:
    """`RuntimeError: ...`, `torch.OutOfMemoryError: ...`, `KeyboardInterrupt` at column 0."""
    return bool(message) and not message[0].isspace() and bool(_EXCEPTION_LINE.match(message[:300]))


class ErrorScanner:
    """Fed line by line; `records` holds (line, kind, message), sorted once `finish` runs."""

    def __init__(self) -> None:
        self.records: list[tuple[int, str, str]] = []
        self.open: dict[str, list[_Traceback]] = {}
        self.last_taken: dict[str, int] = {}  # source -> index of the last traceback line
        # source -> (index, indentation) of the last frame of a traceback whose header is gone
        self.frames: dict[str, tuple[int, int]] = {}
        self.previous: dict[str, str] = {}  # source -> the line above, from that source

    def feed(self, index: int, body: str, source: str, number: int | None = None) -> None:
        """Line `index` (0-based, consecutive) of the input; `number` is the line to report
        (index + 1 unless lines were unwrapped from container records)."""
        previous = self.previous.get(source, "")
        if source not in self.previous and len(self.previous) >= _MAX_SOURCES:
            del self.previous[next(iter(self.previous))]
        self.previous[source] = body
        stream = self.open.get(source)
        if not stream and 'File "' in body and _FRAME.match(body):
            self._frame(index, source, body)
            return
        if not stream and not _may_report(body) and not self._after_frame(index, source):
            return
        number = index + 1 if number is None else number
        stamp, tags, message = sglang_message(body)
        if _HEADER in message:
            self._header(number, source, tags, message)
            self.last_taken[source] = index
            return
        # A stamped line belongs to a traceback only right after one of its lines (setups that
        # prefix every line of a traceback); otherwise it is the next log record.
        line = _Line(message, tags, stamp is not None, self.last_taken.get(source) == index - 1)
        if stream and self._continue(stream, line):
            if message.strip():
                self.last_taken[source] = index
            return
        if stream:
            self._settle(source, closing_finished=True)
        if stamp is None and self._after_frame(index, source):
            found = self._exception_under_frames(source, message)
            if found is not None:
                self.records.append((number, *found))
                return
        if _FRAME.match(previous) and _indent(message) > _indent(previous):
            return  # source code under a frame of a traceback whose header is not in the log
        kind = classify(message)
        if kind:
            self.records.append((number, kind, _clip(message)))

    def finish(self) -> list[tuple[int, str, str]]:
        for source in list(self.open):
            for tb in self.open.pop(source):
                self._close(tb)
        self.records.sort(key=lambda r: r[0])
        return self.records

    def _header(self, number: int, source: str, tags: str, message: str) -> None:
        stream = self.open.setdefault(source, [])
        latest = stream[-1] if stream else None
        if latest and latest.chained and (not tags or tags == latest.tags):
            latest.chained = False  # the next traceback of a chain: same record
            latest.earlier, latest.message = latest.message or latest.earlier, None
            latest.lines_seen += 1
            return
        for tb in list(stream):
            # A header arriving soon after another one is a second rank interleaving; a header
            # after a long traceback means the earlier one was cut or has ended.
            if tb.message is not None or tb.lines_seen >= 3:
                stream.remove(tb)
                self._close(tb)
        if len(stream) >= _MAX_OPEN:
            self._close(stream.pop(0))
        indent = message[: len(message) - len(message.lstrip())]
        stream.append(
            _Traceback(
                number,
                tags,
                _clip(message),
                indent=indent if message.lstrip().startswith(_HEADER) else "",
            )
        )

    def _continue(self, stream: list[_Traceback], line: _Line) -> bool:
        """True when the line belongs to an open traceback of this source."""
        mine = [tb for tb in stream if line.tags and tb.tags == line.tags] or stream
        latest = mine[-1]
        message = latest.dedented(line.message)
        waiting = [tb for tb in mine if tb.message is None]
        if not message.strip():
            return True  # blank lines separate chained tracebacks
        if message.startswith(_CHAIN):
            latest.chained = True
            latest.lines_seen += 1
            return True
        if message[0].isspace() and (waiting or latest.absorbed < _ABSORB_LIMIT):
            for tb in waiting or [latest]:
                tb.lines_seen += 1
                tb.idle = 0
            if not waiting:
                latest.absorbed += 1
            return True
        if waiting and (line.contiguous or not line.stamped) and is_exception_line(message):
            waiting[0].message = _clip(message)
            waiting[0].absorbed = 0
            waiting[0].chained = False
            return True
        if (
            not waiting
            and not line.stamped
            and latest.absorbed < _ABSORB_LIMIT
            and not latest.chained
            and "NCCL WARN" not in message
            and (line.contiguous or classify(message) is None)
        ):
            # The rest of a multi-line exception message, right below it (torch's NCCL errors go
            # on with `ncclSystemError: ...`, `Last error:`); NCCL's own WARN lines and error
            # lines after a gap are records of their own.
            latest.absorbed += 1
            return True
        return False

    def _frame(self, index: int, source: str, body: str) -> None:
        """A frame outside any traceback read here: its header was cut off."""
        if source not in self.frames and len(self.frames) >= _MAX_SOURCES:
            del self.frames[next(iter(self.frames))]
        self.frames[source] = (index, _indent(body))

    def _after_frame(self, index: int, source: str) -> bool:
        """Whether the line may still be the exception line under a headerless frame."""
        seen = self.frames.get(source)
        if seen is not None and index - seen[0] > _FRAME_GAP:
            del self.frames[source]
            return False
        return seen is not None

    def _exception_under_frames(self, source: str, message: str) -> tuple[str, str] | None:
        """(kind, message) when the line is the exception line of the frames above it: at two
        columns left of them, the indentation of the traceback as printed."""
        indent = self.frames[source][1] - 2
        if indent < 0 or message[:indent].strip() or not is_exception_line(message[indent:]):
            return None
        del self.frames[source]
        text = message[indent:]
        return classify(text) or "error", _clip(text)

    def _settle(self, source: str, closing_finished: bool) -> None:
        """An unrelated line: finished tracebacks end, unfinished ones wait a little longer."""
        stream = self.open.get(source, [])
        for tb in list(stream):
            tb.idle += 1
            if (closing_finished and tb.message is not None) or tb.idle > _IDLE_LIMIT:
                stream.remove(tb)
                self._close(tb)
        if not stream:
            self.open.pop(source, None)

    def _close(self, tb: _Traceback) -> None:
        self.records.append((tb.line, "traceback", tb.message or tb.earlier or tb.header))
