"""Control characters shown, never obeyed: a file name or a log line may hold terminal escapes
(`\x1b[2J` clears the screen, `\x1b]8;;` makes a link); wherever such text reaches a terminal
or a report it is written as `\\x1b`. Bidirectional controls too (`\u202e` shows what follows
right to left: a hunk or a file name then reads as other code, "Trojan Source"): `\\u202e`.
A byte of a file name that is not UTF-8 (os.fsdecode's lone surrogate) is shown as `\\xff`."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls; the bidirectional marks and overrides;
# the surrogates that stand for undecodable bytes
_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\udc80-\udcff]"
)


def visible(text: str) -> str:
    return _CONTROL.sub(_shown, text)


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# a terminal's escape sequences: CSI (colours, cursor: `\x1b[31m`) and OSC (titles, links),
# as text copied from a coloured terminal holds them
_ESCAPE = re.compile(r"\x1b\[[0-9;?<=>!]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")


def without_escapes(text: str) -> str:
    """`text` with its terminal escape sequences taken out (the words they coloured kept)."""
    return _ESCAPE.sub("", text)


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None
