"""A process's temporary folders (its git object store, a cluster job's files), named for the
pid that made them: a process killed before its cleanup ran (SIGKILL; a Ray worker stopped
with its cluster) left them in the temp folder for good (836 object stores were found there).
The next process that makes such a folder removes those whose maker is gone. Standard library
only: the node's helper runs it too (uploaded beside it)."""

from __future__ import annotations

import functools
import os
import re
import shutil
import socket
import tempfile
from pathlib import Path

PREFIX = "debug-agent-"
_NAMED = re.compile(rf"{PREFIX}[a-z]+-(\d+)-\w+")  # kind, pid, mkdtemp's random part
LOCK_REASON = "debug-agent pid "  # a scratch worktree's lock: `debug-agent pid N on HOST`
_LOCKED = re.compile(rf"{LOCK_REASON}([0-9]+)(?: on (.+))?")


def temp_folder(kind: str) -> Path:
    """A new private folder (0700) in the temp folder, named for `kind` and this process."""
    _remove_orphans()
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-{os.getpid()}-"))


@functools.cache
def _remove_orphans() -> None:
    """Once a process: the folders of makers no longer running (others' are left alone), and
    scratch worktrees of killed runs: in a repository since deleted, or in one that still is
    (its own next run there would reap it, but that may never come)."""
    for entry in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        made = _NAMED.fullmatch(entry.name)
        admin = _admin_folder(entry)
        if (made and not _running(int(made[1]))) or (admin and not admin.is_dir()):
            shutil.rmtree(entry, ignore_errors=True)
        elif admin and _owner_gone(admin):
            # a SIGKILLed run's, in a repository that still is: its entry in the user's
            # .git/worktrees goes too (as `git worktree remove` does), then the tree
            shutil.rmtree(admin, ignore_errors=True)
            shutil.rmtree(entry, ignore_errors=True)


def _admin_folder(tree: Path) -> Path | None:
    """The administrative folder a scratch worktree's `.git` file names; None for a folder
    that is no scratch worktree, or one without that file yet (git is still adding it)."""
    if not tree.name.startswith(f"{PREFIX}wt-"):
        return None
    try:
        line = (tree / ".git").read_text(errors="replace").strip()
    except OSError:
        return None
    return Path(line.removeprefix("gitdir: ")) if line.startswith("gitdir: ") else None


def lock_owner(reason: str) -> int | None:
    """The pid of this machine's process that locked a scratch worktree (a lock from before
    hosts were named is this machine's); None for another machine's, or another lock. On a
    file system nodes share, another node's worktrees are that node's to judge."""
    owner = _LOCKED.fullmatch(reason.strip())
    if owner is None or owner[2] not in (None, socket.gethostname()):
        return None
    return int(owner[1])


def _owner_gone(admin: Path) -> bool:
    """The worktree's lock names a process of this machine that is no longer running."""
    try:
        owner = lock_owner((admin / "locked").read_text(errors="replace"))
    except OSError:
        return False
    return owner is not None and not _running(owner)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: running
        return True
    return True
