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
import tempfile
from pathlib import Path

PREFIX = "debug-agent-"
_NAMED = re.compile(rf"{PREFIX}[a-z]+-(\d+)-\w+")  # kind, pid, mkdtemp's random part


def temp_folder(kind: str) -> Path:
    """A new private folder (0700) in the temp folder, named for `kind` and this process."""
    _remove_orphans()
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-{os.getpid()}-"))


@functools.cache
def _remove_orphans() -> None:
    """Once a process: the folders of makers no longer running (others' are left alone), and
    scratch worktrees whose repository is gone (a killed run's, in a repository since
    deleted: its own repository would have reaped it at the next run there)."""
    for entry in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        made = _NAMED.fullmatch(entry.name)
        if (made and not _running(int(made[1]))) or _repository_gone(entry):
            shutil.rmtree(entry, ignore_errors=True)


def _repository_gone(tree: Path) -> bool:
    """A scratch worktree whose `.git` file names an administrative folder that is not there.
    One without that file yet (git is still adding it) proves nothing."""
    if not tree.name.startswith(f"{PREFIX}wt-"):
        return False
    try:
        line = (tree / ".git").read_text(errors="replace").strip()
    except OSError:
        return False
    return line.startswith("gitdir: ") and not os.path.isdir(line.removeprefix("gitdir: "))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: running
        return True
    return True
