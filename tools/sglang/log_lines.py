"""Splitting an SGLang log into lines and peeling off what transports put in front of each line.

SGLang's own prefix is `[date time( TAG)*] ` (configure_logger in SGLang's
python/sglang/srt/utils/common.py, formerly srt/utils.py; examples in
tests/fixtures/sglang_logs/05-rank-tags-combinations.log). In the wild the line may also carry,
in any order: ANSI colours, a docker-compose service (`sglang-1  | `), a `docker logs -t` /
kubectl RFC 3339 stamp, `kubectl logs --prefix` (`[pod/name/container] `), a journald prefix
(`Jan 01 12:00:00 host python[12]: `), a Ray actor (`(SGLangEngine pid=N, ip=…) `), a torchrun
rank (`[rank0]: `), a log viewer's line number (`[80746] `), a Markdown quote (`> `), and Ray's
de-duplication suffix (` [repeated 3x across cluster]`).
Peeling them off lets every line be read as SGLang wrote it (a traceback's indentation included).
Lines that a container runtime wrapped whole (docker json-file, CRI) are unwrapped first
(tools.sglang.log_docker). Lines are produced one at a time, from a text or an open file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TextIO

from tools.sglang.log_docker import unwrap

# Past this, a line is cut before any regex sees it: bounded work per line whatever the input.
MAX_LINE_CHARS = 1 << 20
# A container line that its runtime split is joined up to this size, then read as it is.
MAX_JOINED_CHARS = 1 << 24
_NEWLINE = re.compile(r"\r\n?|\n")

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])")
_TRANSPORT = re.compile(
    r"(?P<docker>[A-Za-z0-9][\w.-]{0,100}) {0,40}\| ?"
    r"|\((?P<ray>(?:[\w.:/-]{1,100},? )?pid=\d+[^)\n]{0,200})\) ?"
    r"|\[(?P<rank>rank\d+)\]: ?"
    r"|\[(?P<lineno>\d{1,9})\] "  # a viewer's line number: `[80746] [rank0]:[E321 ...`
    r"|(?P<quote>>(?: ?>){0,7})(?: |$)"  # a Markdown quote: `> [2025-01-01 12:00:00 TP0] ...`
    r"|\[(?P<pod>pod/[^\]\s]{1,200})\] "
    r"|(?P<iso>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?) "
    r"|(?P<journal>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) (?P<unit>\S{1,100} [\w.@/-]{1,100}"
    r"(?:\[\d+\])?): "
)
_RAY_REPEAT = re.compile(r"\s*\[repeated \d+x across cluster\]\s*$")

# SGLang's prefix: `[2026-01-01 12:00:00(.123)?( DP0| TP0| EP0 ...)*] `; time-only stamps exist
# too, and some setups put a level name (`INFO`) among the tags.
SGLANG_BRACKET = re.compile(
    r"\[(?P<ts>(?:\d{4}-\d\d-\d\d[ T])?\d\d:\d\d:\d\d(?:[.,]\d{1,9})?)"
    r"(?P<tags>(?: +[A-Za-z_]{1,20}\d{0,6}){0,12}) *\]"
)
_TAG = re.compile(r"([A-Z][A-Z_]*?)(\d+)")
# What begins a new log record; a wrapped dump's continuation lines never start like this.
RECORD_START = re.compile(
    r"\s*$|\[\d{4}-\d\d-\d\d|\[\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[ T]\d\d:\d\d"
    r"|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b|Traceback \("
    r"|\[[a-z][\w-]{0,30}\] |/\S+\.py:\d+: "
)


@dataclass(slots=True)
class LogLine:
    """One line as SGLang wrote it, with where it sits and who sent it."""

    index: int  # 0-based position among the lines read: "the line above" is index - 1
    number: int  # 1-based line of the input (the lines a docker record holds share its number)
    raw: str  # uncut, transport prefixes kept: a JSON record with `--output-details` is huge
    body: str  # capped in length, transports peeled off
    source: str  # docker service / Ray actor / torch rank: "" when none
    stamp: str | None  # a time a transport put in front (docker, journald): the last resort


def text_lines(text: str) -> Iterator[str]:
    """Lines as Python's universal newlines count them: `\\r\\n`, `\\r` and `\\n` each end one
    (a trailing newline leaves an empty last line, as `str.split` does)."""
    if text.startswith("\ufeff"):  # a byte-order mark is not part of the first line
        text = text[1:]
    start = 0
    for m in _NEWLINE.finditer(text):
        yield text[start : m.start()]
        start = m.end()
    yield text[start:]


def file_lines(stream: TextIO) -> Iterator[str]:
    """`text_lines` of a text file opened with newline=None, read one line at a time."""
    ended = True  # an empty file is one empty line, as for text
    for number, line in enumerate(stream):
        if number == 0 and line.startswith("\ufeff"):
            line = line[1:]
        ended = line.endswith("\n")
        yield line[:-1] if ended else line
    if ended:
        yield ""


def strip_transport(line: str) -> tuple[str, str, str | None]:
    """(body, source key, transport stamp) of one line, the line already capped in length."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if "repeated" in line:
        line = _RAY_REPEAT.sub("", line)
    source: list[str] = []
    outer_stamp: str | None = None
    for _ in range(4):  # a few nested transports at most (docker around Ray, say)
        m = _TRANSPORT.match(line)
        if m is None:
            break
        stamp = m.group("iso") or m.group("journal")
        if stamp:
            outer_stamp = outer_stamp or stamp
        if not (m.group("iso") or m.group("lineno") or m.group("quote")):  # not a sender
            source.append(
                m.group("docker")
                or m.group("ray")
                or m.group("rank")
                or m.group("pod")
                or m.group("unit")
                or ""
            )
        line = line[m.end() :]
    return line, "|".join(source), outer_stamp


def _pieces(message: str) -> list[str]:
    """The lines of one container record: a progress bar's `\\r` ends lines inside it."""
    if "\r" not in message and "\n" not in message:
        return [message]
    pieces = [p for p in text_lines(message) if p]
    return pieces or [""]


def read_lines(raw_lines: Iterable[str]) -> Iterator[LogLine]:
    """Each input line as a LogLine; docker json-file and CRI records are unwrapped, and records
    a runtime split (docker's 16 KB parts, CRI's `P`) are joined into the line they were."""
    index = 0
    parts: list[str] = []  # a container line still being joined
    first_number, time, size = 0, None, 0

    def flush() -> Iterator[LogLine]:
        nonlocal index
        for piece in _pieces("".join(parts)):
            yield _line(index, first_number, piece, time)
            index += 1
        parts.clear()

    for number, raw in enumerate(raw_lines, 1):
        head = raw[:1]
        wrapped = unwrap(raw) if head == "{" or head.isdigit() or head in (" ", "\t") else None
        if wrapped is None:
            if parts:
                yield from flush()
            yield _line(index, number, raw, None)
            index += 1
            continue
        if not parts:
            first_number, time, size = number, wrapped.time, 0
        parts.append(wrapped.message)
        size += len(wrapped.message)
        if wrapped.whole or size > MAX_JOINED_CHARS:
            yield from flush()
    if parts:
        yield from flush()


def _line(index: int, number: int, raw: str, time: str | None) -> LogLine:
    body, source, stamp = strip_transport(raw[:MAX_LINE_CHARS])
    return LogLine(index, number, raw, body, source, time or stamp)


def log_lines(text: str) -> Iterator[LogLine]:
    """The LogLines of a text."""
    return read_lines(text_lines(text))


def sglang_message(body: str) -> tuple[str | None, str, str]:
    """(stamp, rank tags, message) of a body: SGLang's `[ts tags] ` removed when it leads."""
    m = SGLANG_BRACKET.match(body)
    if m is None:
        return None, "", body
    message = body[m.end() :]
    if message.startswith(" "):  # the format puts exactly one space after `]`
        message = message[1:]
    return m.group("ts"), m.group("tags").strip(), message


@lru_cache(maxsize=1024)  # the same few tag sets repeat; callers only read the result
def rank_fields(tags: str) -> dict[str, int]:
    """`DP0 TP3 EP3` -> {"dp_rank": 0, "tp_rank": 3, "ep_rank": 3}; names kept whole (MOE_DP)."""
    ranks: dict[str, int] = {}
    for tag in tags.split():
        m = _TAG.fullmatch(tag)
        if m:
            ranks[f"{m.group(1).lower()}_rank"] = int(m.group(2))
    return ranks
