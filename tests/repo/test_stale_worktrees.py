"""Worktrees left by a run that died are removed at the next start, but only this machine's:
on a file system that cluster nodes share, another node's pid means nothing here."""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path

import pytest

from tests.conftest import git, only_main_worktree
from tools.repo.worktree import LOCK_REASON, reap_stale_worktrees

DEAD_PID = 4_000_000  # above Linux's pid_max: never a live process


def _empty_repo(tmp_path: Path) -> Path:
    """A repository with one empty commit."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(
        repo,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )
    return repo


def test_only_this_machines_dead_owners_are_reaped(tmp_path: Path) -> None:
    repo = _empty_repo(tmp_path)
    reasons = {
        "here": f"{LOCK_REASON}{DEAD_PID} on {socket.gethostname()}",
        "old": f"{LOCK_REASON}{DEAD_PID}",  # written before hosts were named
        "elsewhere": f"{LOCK_REASON}{DEAD_PID} on another-node",
        "user": "mine, not debug-agent's",
    }
    for name, reason in reasons.items():
        git(repo, "worktree", "add", "--detach", "--lock", "--reason", reason, str(tmp_path / name))
    reaped = {Path(w.path).name for w in reap_stale_worktrees(repo)}
    assert reaped == {"here", "old"}
    left = {Path(line.split()[0]).name for line in git(repo, "worktree", "list").splitlines()}
    assert left == {"repo", "elsewhere", "user"}


def test_a_worktree_add_killed_half_way_is_cleared(tmp_path: Path) -> None:
    """A SIGKILL during `git worktree add` can leave its entry without `commondir`; git then
    fails every `worktree list`. The next start clears the debris and lists again."""
    repo = _empty_repo(tmp_path)
    half = repo / ".git" / "worktrees" / "debug-agent-wt-killed"
    half.mkdir(parents=True)
    (half / "HEAD").write_text("0" * 40 + "\n")
    assert reap_stale_worktrees(repo) == []
    assert not half.exists()
    assert only_main_worktree(repo)


def test_a_worktree_git_refuses_to_add_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temporary folder was made before `git worktree add`, and left empty in the temp
    folder when git refused (an object missing, a full disk)."""
    import git as gitpython

    from tools.repo.worktree import scratch_worktree

    repo = _empty_repo(tmp_path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(gitpython.GitCommandError), scratch_worktree(repo, "1" * 40, []):
        pass
    assert list(scratch.iterdir()) == []
    only_main_worktree(repo)
