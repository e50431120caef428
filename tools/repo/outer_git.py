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
from typing import TYPE_CHECKING

from tools.errors import ToolError

# git's own list: `git rev-parse --local-env-vars` (git 2.39), what git clears before it runs a
# command in another repository; tests/repo/test_outer_git.py checks it against the git here.
# Written out, as asking git would cost every command a process at start-up.
OUTER_VARIABLES = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
)  # and GIT_CONFIG_COUNT, which stays (see above)


def forget_outer_repository() -> None:
    """Remove the variables from this process's environment (so from every child's too); a
    ToolError when the user's GIT_CONFIG_COUNT makes git refuse to run."""
    for name in OUTER_VARIABLES:
        os.environ.pop(name, None)
    if "GIT_CONFIG_COUNT" in os.environ:
        checked = _git("config", "--list")
        if checked is not None and checked.returncode != 0:
            said = [line for line in checked.stderr.splitlines() if line.strip()]
            raise ToolError(
                f"GIT_CONFIG_COUNT={os.environ['GIT_CONFIG_COUNT']!r} makes every git command "
                f"fail ({said[0].removeprefix('error: ') if said else 'git refused it'}): fix "
                "or unset it and its GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n"
            )


if TYPE_CHECKING:
    import subprocess


def _git(*args: str) -> subprocess.CompletedProcess | None:
    """git, outside any repository; None where git cannot start (the command that needs it
    says so)."""
    import subprocess  # only where GIT_CONFIG_COUNT is set: start-up stays lean

    try:
        return subprocess.run(
            ["git", *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            cwd="/",
        )
    except OSError:
        return None
