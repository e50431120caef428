"""One process at a time in a session folder.

Two `investigate --resume` (or a chat and a resume) of one session would both go on from its
last checkpoint: each launch twice, the transcript's lines interleaved under the same numbers.
The process that runs a session holds a lock on `session.lock` in its folder for as long as it
runs (the kernel lets go when the process ends, however it ends); a second one stops at once
with one line naming the first.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import TextIO

from tools.errors import ToolError
from tools.own_files import open_own

LOCK_NAME = "session.lock"


def _locked(folder: Path) -> TextIO:
    """The lock file, open and locked by this process; a ToolError naming the process that
    holds it where another does."""
    stream = open_own(folder / LOCK_NAME)  # the caller keeps or closes it
    try:
        fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        stream.seek(0)
        holder = stream.read().strip() or "?"
        stream.close()
        raise ToolError(
            f"session {folder.name} is running in another process (pid {holder}): wait for "
            "it to end or stop it, then resume"
        ) from None
    return stream


def hold_session(folder: Path) -> TextIO:
    """The open lock file, held, with this process's pid in it."""
    stream = _locked(folder)
    stream.seek(0)
    stream.truncate()
    stream.write(f"{os.getpid()}\n")
    stream.flush()
    return stream


def check_free(folder: Path) -> None:
    """A ToolError where another process runs the session: asked before anything else of a
    resume (a session running, not yet at its first checkpoint, read as one with none)."""
    if (folder / LOCK_NAME).exists():
        _locked(folder).close()  # closing lets go at once; the holder's pid stays written
