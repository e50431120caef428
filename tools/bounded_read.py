"""Reading a file a user named, whole, but never for ever: a path in a config may name a
device (/dev/zero is endless), a FIFO (no writer: open blocks), or a folder."""

from __future__ import annotations

import stat
from pathlib import Path

from tools.errors import ToolError


class NotAFile(ToolError):
    """Not a regular file, or larger than any such file is; the message says which."""


def check_regular(path: object, mode: int) -> None:
    """`mode` (from stat) is a regular file's, else a one-line NotAFile naming `path`."""
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a pipe" if stat.S_ISFIFO(mode) else None
        raise NotAFile(f"{path} is {kind or 'a device'}, not a regular file")


def check_size(path: object, data: bytes, most: int) -> bytes:
    if len(data) > most:
        raise NotAFile(f"{path} holds over {most >> 20} MB, more than such a file ever holds")
    return data


def read_regular(path: Path, most: int) -> bytes:
    """The bytes of the regular file `path`, at most `most` of them (OSError as open raises)."""
    check_regular(path, path.stat().st_mode)
    with path.open("rb") as f:
        return check_size(path, f.read(most + 1), most)
