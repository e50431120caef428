"""debug-agent run from inside git (a pre-commit hook, `git rebase --exec`): the calling git's
GIT_INDEX_FILE, GIT_DIR, GIT_WORK_TREE and `-c` settings name the user's repository and its
pending commit; none of our git commands may follow them (tools/repo/outer_git.py)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import assert_one_line_error, git, make_repo, run_cli, sh
from tests.tools.test_generic_target import BENCH, CONFIG, SERVER, WORK


def _lab(tmp_path: Path) -> tuple[Path, str]:
    """The generic target with one changed line; the id of its hunk."""
    repo = make_repo(tmp_path, {"server.py": SERVER, "work.py": WORK, "bench.py": BENCH})
    (repo / "work.py").write_text(WORK.replace("return base", "return base * 2"))
    (repo / "debug-agent.toml").write_text(CONFIG)
    (hunk,) = json.loads(run_cli("diff", "--json", cwd=repo).stdout)["candidates"]
    return repo, hunk["id"]


def test_an_experiment_in_a_pre_commit_hook_leaves_the_commit_alone(tmp_path: Path) -> None:
    """`git commit -a` hands its hook GIT_INDEX_FILE=.git/index.lock, the index being
    committed: a scratch tree built through it changed what the commit held."""
    repo, hunk = _lab(tmp_path)
    out = tmp_path / "hook"
    out.mkdir()
    experiment = shlex.join([sys.executable, "-m", "agent", "experiment", "--revert", hunk])
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        f"#!/bin/sh\n{experiment} --json > {out}/out.json 2> {out}/err.txt\necho $? > {out}/rc\n"
    )
    hook.chmod(0o755)
    sh(repo, "git", "-c", "core.hooksPath=.git/hooks", "commit", "-qam", "slower")
    assert (out / "rc").read_text().strip() == "0", (out / "err.txt").read_text()[-2000:]
    assert json.loads((out / "out.json").read_text())["metric"]["median"] > 0
    # the commit holds the user's change, as `commit -a` staged it; nothing else moved
    assert git(repo, "show", "--name-only", "--format=", "HEAD") == "work.py"
    assert "base * 2" in git(repo, "show", "HEAD:work.py")
    assert git(repo, "status", "--porcelain") == "?? debug-agent.toml"
    assert git(repo, "worktree", "list").count("\n") == 0


def test_the_calling_gits_variables_are_not_followed(tmp_path: Path) -> None:
    """Absolute GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE and a `-c core.hooksPath` (which
    would outrank our own settings): the user's index and files keep every byte, and no hook
    runs in a scratch tree."""
    repo, hunk = _lab(tmp_path)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    marker = tmp_path / "a-hook-ran"
    (hooks / "post-checkout").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (hooks / "post-checkout").chmod(0o755)
    index = (repo / ".git" / "index").read_bytes()
    env = {
        "GIT_DIR": str(repo / ".git"),
        "GIT_WORK_TREE": str(repo),
        "GIT_INDEX_FILE": str(repo / ".git" / "index"),
        "GIT_CONFIG_PARAMETERS": f"'core.hooksPath'='{hooks}'",
    }
    done = run_cli("experiment", "--revert", hunk, "--json", cwd=repo, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (repo / ".git" / "index").read_bytes() == index
    assert git(repo, "status", "--porcelain") == "M work.py\n?? debug-agent.toml"  # stripped
    assert not marker.exists()
    assert os.environ.get("GIT_DIR") is None  # the test's own environment is untouched


@pytest.mark.parametrize(
    ("count", "git_says"),
    [("abc", "bogus count"), ("-1", "too many entries"), ("2", "missing config key")],
)
def test_a_git_config_count_git_refuses_is_one_line(
    count: str, git_says: str, tmp_path: Path
) -> None:
    """Before, `abc` was an internal error and `2` read "has no commit yet"; a count git
    accepts (" 1") is kept, and its setting reaches git."""
    repo = make_repo(tmp_path)
    (repo / "debug-agent.toml").write_text(CONFIG)
    env = {"GIT_CONFIG_COUNT": count, "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "c"}
    assert_one_line_error(
        run_cli("diff", cwd=repo, env=env), f"GIT_CONFIG_COUNT='{count}'", git_says
    )
    (repo / "b.py").write_text("x = 2\n")
    done = run_cli("diff", "--json", cwd=repo, env={**env, "GIT_CONFIG_COUNT": " 1"})
    assert done.returncode == 0, done.stderr
    assert [c["file"] for c in json.loads(done.stdout)["candidates"]] == ["b.py"]


def test_the_list_is_the_one_this_git_gives() -> None:
    """Written out for start-up time; a git that names one more variable fails here."""
    from tools.repo.outer_git import OUTER_VARIABLES

    listed = subprocess.run(
        ["git", "rev-parse", "--local-env-vars"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert set(listed) - {"GIT_CONFIG_COUNT"} <= set(OUTER_VARIABLES)
