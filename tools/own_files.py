"""Files we write into a folder that may have come from elsewhere: a session folder sent for
review or unpacked from a tarball, whose `report.html`, `state.json` or `session.lock` may be a
symbolic link to a file of the user's. `report --html` on such a folder wrote its page through
the link (into ~/.bashrc, say), and a resume truncated the lock's target. Here a link is never
followed: a file written whole replaces it, and one appended to or locked is refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path
from typing import TextIO

from tools.errors import ToolError


def replace_text(path: Path, text: str) -> None:
    """`path` holds `text`, written whole: a reader, or a process killed mid-write, never sees
    half of it; a link at `path` is replaced, not written through."""
    temp = path.parent / f".{path.name}.{secrets.token_hex(4)}"
    handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def append_text(path: Path, text: str) -> None:
    with open_own(path) as out:
        out.write(text)


def open_own(path: Path) -> TextIO:
    """`path` open to read and append (made if absent); a ToolError where it is a link."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ToolError(
                f"{path} is a symbolic link: a session's files are its own, never a link to "
                "another file (copy the session folder without links)"
            ) from None
        raise
    return os.fdopen(fd, "a+", encoding="utf-8")
