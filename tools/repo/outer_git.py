"""Git variables that name another repository, and git settings that break every git command.

A hook, `git rebase --exec` or an alias that runs debug-agent hands it GIT_DIR, GIT_INDEX_FILE,
GIT_WORK_TREE and the `git -c` settings of that call, which every git command of ours would
follow: with a pre-commit hook's GIT_INDEX_FILE, building a scratch tree staged files into the
commit being made; with GIT_WORK_TREE, scratch checkouts went to the user's files; a `-c
core.hooksPath` outranked our own settings. The target is the repository the config names, so
they are dropped at start-up. The list is git's own (`git rev-parse --local-env-vars`: what git
clears before it runs a command in another repository).

GIT_CONFIG_COUNT stays: a user sets it on purpose (`safe.directory` in a container), and our
isolation settings come after its entries. One git refuses (`bogus count`) is one line here,
rather than every git command failing later under another name.
"""

from __future__ import annotations

import os
import subprocess

from tools.errors import ToolError

_KEPT = frozenset({"GIT_CONFIG_COUNT"})


def forget_outer_repository() -> list[str]:
    """Remove the variables from this process's environment (so from every child's too); the
    names removed. A ToolError when the user's GIT_CONFIG_COUNT makes git refuse to run."""
    if not any(name.startswith("GIT_") for name in os.environ):
        return []  # the usual case: no git process to ask
    listed = _git("rev-parse", "--local-env-vars", env=_without_git_variables())
    removed = [
        name
        for name in (listed.stdout.split() if listed else [])
        if name not in _KEPT and os.environ.pop(name, None) is not None
    ]
    if "GIT_CONFIG_COUNT" in os.environ:
        checked = _git("config", "--list", env=dict(os.environ))
        if checked is not None and checked.returncode != 0:
            said = [line for line in checked.stderr.splitlines() if line.strip()]
            raise ToolError(
                f"GIT_CONFIG_COUNT={os.environ['GIT_CONFIG_COUNT']!r} makes every git command "
                f"fail ({said[0].removeprefix('error: ') if said else 'git refused it'}): fix "
                "or unset it and its GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n"
            )
    return removed


def _without_git_variables() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def _git(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess | None:
    """git, outside any repository; None where git cannot start (the command that needs it
    says so)."""
    try:
        return subprocess.run(
            ["git", *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd="/",
        )
    except OSError:
        return None
