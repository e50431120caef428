"""A process killed before its cleanup ran (SIGKILL, a Ray worker stopped with its cluster)
left its git object store in the temp folder for good: the next process removes it, and a
scratch worktree of a killed run, its repository deleted or not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

MAKE = "from tools.temp_folders import temp_folder; print(temp_folder('objects'), flush=True)"


def test_the_folders_of_a_killed_process_are_removed_by_the_next(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    killed = subprocess.Popen(
        [sys.executable, "-c", MAKE + "; import time; time.sleep(60)"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert killed.stdout is not None
    left = Path(killed.stdout.readline().strip())
    others = [tmp_path / "debug-agent-wt-a1b2c3d4", tmp_path / "debug-agent-seed-lab-x1"]
    for folder in others:  # not ours to judge: a worktree is reaped by its repository
        folder.mkdir()
    (others[0] / ".git").write_text(f"gitdir: {tmp_path}\n")  # its repository is there
    orphan = tmp_path / "debug-agent-wt-e5f6g7h8"  # a killed run's, its repository deleted
    orphan.mkdir()
    (orphan / ".git").write_text(f"gitdir: {tmp_path}/gone/.git/worktrees/{orphan.name}\n")
    alive = tmp_path / f"debug-agent-objects-{os.getpid()}-live1234"
    alive.mkdir()
    (left / "pack").mkdir()
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()  # reaped: its pid is gone
    assert left.is_dir() and left.name.startswith(f"debug-agent-objects-{killed.pid}-")
    made = subprocess.run(
        [sys.executable, "-c", MAKE], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    assert not left.exists() and not orphan.exists()
    assert all(folder.is_dir() for folder in [*others, alive])


def test_a_killed_runs_worktree_in_a_repository_that_still_is_goes(tmp_path: Path) -> None:
    """Only that repository's next run reaped it (with its entry in the user's
    .git/worktrees), and that run may never come: the next process anywhere removes it.
    A live owner's, and another machine's (a shared file system), stay."""
    import socket

    from tests.conftest import make_repo, sh

    repo = make_repo(tmp_path)
    temp = tmp_path / "tmp"
    temp.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    owners = {
        "killed": f"{dead.pid} on {socket.gethostname()}",
        "live": f"{os.getpid()} on {socket.gethostname()}",
        "elsewhere": f"{dead.pid} on another-node",
    }
    for name, owner in owners.items():
        tree = temp / f"debug-agent-wt-{name}"
        sh(repo, "git", "worktree", "add", "-q", "--detach", str(tree))
        sh(repo, "git", "worktree", "lock", "--reason", f"debug-agent pid {owner}", str(tree))
    env = {**os.environ, "TMPDIR": str(temp)}
    made = subprocess.run(
        [sys.executable, "-c", MAKE], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    assert not (temp / "debug-agent-wt-killed").exists()
    assert sorted(p.name for p in (repo / ".git" / "worktrees").iterdir()) == [
        "debug-agent-wt-elsewhere",
        "debug-agent-wt-live",
    ]
    assert "debug-agent-wt-killed" not in sh(repo, "git", "worktree", "list")
