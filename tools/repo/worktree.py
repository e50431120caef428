"""Scratch git worktrees: one per experiment, holding the good tree plus chosen hunks.

The user's working tree, index, stash and refs are never written: a detached worktree has its
own HEAD and index. Each worktree is locked with the owner's pid, so a later start can tell a
crashed run's leftovers from a live run's and remove them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import git
import psutil
from pydantic import BaseModel

from tools.repo.candidates import GitError, open_repo

PREFIX = "debug-agent-wt-"
LOCK_REASON = "debug-agent pid "


class StaleWorktree(BaseModel):
    path: str
    owner_pid: int


def _our_worktrees(repo: git.Repo) -> list[StaleWorktree]:
    found, path = [], None
    for line in repo.git.worktree("list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            path = line.removeprefix("worktree ")
        elif line.startswith("locked " + LOCK_REASON) and path:
            pid = line.removeprefix("locked " + LOCK_REASON).strip()
            if pid.isdigit():
                found.append(StaleWorktree(path=path, owner_pid=int(pid)))
    return found


def _remove(repo: git.Repo, path: str) -> None:
    with contextlib.suppress(git.GitCommandError):  # if unregistered, only the folder is left
        repo.git.worktree("remove", "--force", "--force", path)
    shutil.rmtree(path, ignore_errors=True)


def reap_stale_worktrees(repo_dir: Path) -> list[StaleWorktree]:
    """Remove the worktrees of debug-agent runs that died (their owner pid is gone)."""
    repo = open_repo(repo_dir)
    stale = [w for w in _our_worktrees(repo) if not psutil.pid_exists(w.owner_pid)]
    for worktree in stale:
        _remove(repo, worktree.path)
    return stale


def join_patches(patches: list[str]) -> str:
    """One patch for `git apply` from single-hunk patches (each ends with a newline)."""
    return "".join(p if p.endswith("\n") else p + "\n" for p in patches)


@contextmanager
def scratch_worktree(
    repo_dir: Path, good_sha: str, patches: list[str], keep_patch: Path | None = None
) -> Iterator[Path]:
    """A detached worktree at `good_sha` with `patches` applied; removed on exit, always."""
    repo = open_repo(repo_dir)
    path = Path(tempfile.mkdtemp(prefix=PREFIX))
    repo.git.worktree(
        "add", "--detach", "--lock", "--reason", f"{LOCK_REASON}{os.getpid()}", str(path), good_sha
    )
    try:
        if patches:
            patch_text = join_patches(patches)
            patch_file = (keep_patch or path.parent / f"{path.name}.patch").resolve()
            patch_file.parent.mkdir(parents=True, exist_ok=True)
            patch_file.write_text(patch_text)
            try:
                git.Git(path).apply("--whitespace=nowarn", str(patch_file))
            except git.GitCommandError as e:
                raise GitError(
                    f"the chosen hunks do not apply together: "
                    f"{e.stderr.strip().splitlines()[-1] if e.stderr else e}"
                ) from None
            finally:
                if keep_patch is None:
                    patch_file.unlink(missing_ok=True)
        yield path
    finally:
        _remove(repo, str(path))
