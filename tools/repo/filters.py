"""The user's clean and smudge filters, run once per file state in our git commands.

A filter driver (`filter.<name>.clean` / `.smudge` in the user's git config, chosen by
.gitattributes) runs for every file git checks out or hashes; each scratch tree checks out and
hashes the same files again (a seed lab with one filter on *.py: 544 runs in six launches). Our
git commands get each command replaced by filter_run.py, which runs the user's own command
once per driver, path and content and answers from its cache after that. The result is the
same bytes the user's filter gives; a filter that fails still fails. A long-running
`filter.<name>.process` (git-lfs) is left as it is: git starts it once per command already.
"""

from __future__ import annotations

import functools
import json
import shlex
import subprocess
import sys
from pathlib import Path

RUNNER = Path(__file__).with_name("filter_run.py")
DIRECTIONS = ("clean", "smudge")


@functools.cache
def user_filters(common_dir: str) -> dict[str, dict[str, str]]:
    """driver -> direction -> command, as git reads them for the repository (every level of
    its config); empty when there are none or git cannot say."""
    done = subprocess.run(
        [
            "git",
            "--git-dir",
            common_dir,
            "config",
            "-z",
            "--get-regexp",
            r"^filter\..*\.(clean|smudge)$",
        ],
        capture_output=True,
    )
    found: dict[str, dict[str, str]] = {}
    for entry in done.stdout.decode(errors="surrogateescape").split("\0"):
        key, _, command = entry.partition("\n")
        driver, _, direction = key.removeprefix("filter.").rpartition(".")
        if driver and direction in DIRECTIONS and command.strip():
            found.setdefault(driver, {})[direction] = command
    return found


def cached_filters(common_dir: str) -> dict[str, str]:
    """Config overrides that put filter_run.py in place of each of the user's commands."""
    runner = f"{shlex.quote(sys.executable)} -I -S {shlex.quote(str(RUNNER))}"
    return {
        f"filter.{driver}.{direction}": f"{runner} {shlex.quote(driver)} {direction} %f"
        for driver, commands in user_filters(common_dir).items()
        for direction in commands
    }


def filter_environment(common_dir: str, cache: Path) -> dict[str, str]:
    """What filter_run.py reads: the user's commands and the cache folder."""
    return {
        "DEBUG_AGENT_FILTERS": json.dumps(user_filters(common_dir)),
        "DEBUG_AGENT_FILTER_CACHE": str(cache),
    }
