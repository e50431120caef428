"""Splitting an SGLang log into lines and peeling off what transports put in front of each line.

SGLang's own prefix is `[date time( TAG)*] ` (see shared/docs/sglang-facts.md §2). In the wild the
line may also carry, in any order: ANSI colours, a docker-compose service (`sglang-1  | `), a
`docker logs -t` / kubectl RFC 3339 stamp, `kubectl logs --prefix` (`[pod/name/container] `), a
journald prefix (`Jan 01 12:00:00 host python[12]: `), a Ray actor (`(SGLangEngine pid=N, ip=…) `),
a torchrun rank (`[rank0]: `), and Ray's de-duplication suffix (` [repeated 3x across cluster]`).
Peeling them off lets every line be read as SGLang wrote it (a traceback's indentation included).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

# Past this, a line is cut before any regex sees it: bounded work per line whatever the input.
MAX_LINE_CHARS = 1 << 20

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])")
_TRANSPORT = re.compile(
    r"(?P<docker>[A-Za-z0-9][\w.-]{0,100}) {0,40}\| ?"
    r"|\((?P<ray>(?:[\w.:/-]{1,100},? )?pid=\d+[^)\n]{0,200})\) ?"
    r"|\[(?P<rank>rank\d+)\]: ?"
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


@dataclass
class LogLines:
    """The input as lines: transport-free bodies, who sent each line, and stamps peeled off."""

    raw: list[str]
    bodies: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # docker service / Ray actor / torch rank
    # index -> a stamp a transport put in front (docker -t, journald): the time of last resort
    outer_stamps: dict[int, str] = field(default_factory=dict)


def split_lines(text: str) -> list[str]:
    """Lines as Python's universal newlines count them: `\\r\\n`, `\\r` and `\\n` each end one."""
    if text.startswith("\ufeff"):  # a byte-order mark is not part of the first line
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


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
        if not m.group("iso"):
            source.append(m.group("docker") or m.group("ray") or m.group("rank") or m.group("pod")
                          or m.group("unit") or "")
        line = line[m.end():]
    return line, "|".join(source), outer_stamp


def load_lines(text: str) -> LogLines:
    lines = LogLines(raw=split_lines(text))
    for index, raw in enumerate(lines.raw):
        body, source, stamp = strip_transport(raw[:MAX_LINE_CHARS])
        lines.bodies.append(body)
        lines.sources.append(source)
        if stamp:
            lines.outer_stamps[index] = stamp
    return lines


def sglang_message(body: str) -> tuple[str | None, str, str]:
    """(stamp, rank tags, message) of a body: SGLang's `[ts tags] ` removed when it leads."""
    m = SGLANG_BRACKET.match(body)
    if m is None:
        return None, "", body
    message = body[m.end():]
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
