"""Control characters shown, never obeyed: a file name or a log line may hold terminal escapes
(`\x1b[2J` clears the screen, `\x1b]8;;` makes a link); wherever such text reaches a terminal
or a report it is written as `\\x1b`."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


# a terminal's escape sequences: CSI (colours, cursor: `\x1b[31m`) and OSC (titles, links),
# as text copied from a coloured terminal holds them
_ESCAPE = re.compile(r"\x1b\[[0-9;?<=>!]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")


def without_escapes(text: str) -> str:
    """`text` with its terminal escape sequences taken out (the words they coloured kept)."""
    return _ESCAPE.sub("", text)


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None
