"""Git commands of ours beside the user's: the user's hooks off (a post-checkout hook that
edits a file would make the scratch tree another tree), no file-system monitor, and their
objects (the blobs of `git add` on a scratch index, of `git apply --index`) written to a store
of this process's own, which reads the user's objects as an alternate: the user's
`.git/objects` holds exactly what it held."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
from pathlib import Path

import git

from tools.repo.filters import cached_filters, filter_environment
from tools.temp_folders import temp_folder


@functools.cache
def own_folder(name: str) -> Path:
    """A folder of this process's own ("objects": its object store; "filters": the filter
    cache), made on first use, removed at exit."""
    folder = temp_folder(name)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _alternate(path: Path) -> str:
    """`path` as an entry of GIT_ALTERNATE_OBJECT_DIRECTORIES: C-quoted where it holds the
    separator or a quote (a repository in `a:b` was read as the two folders `a` and `b`)."""
    text = str(path)
    if os.pathsep not in text and not text.startswith('"'):
        return text

    def escaped(char: str) -> str:
        if char in '"\\':
            return "\\" + char
        return char if char.isprintable() else "".join(f"\\{b:03o}" for b in os.fsencode(char))

    return '"' + "".join(map(escaped, text)) + '"'


def isolation(common_dir: str | os.PathLike[str]) -> dict[str, str]:
    """The environment for git commands of ours on a repository whose shared folder (`.git`)
    is `common_dir`: no hooks or monitor, new objects in our own store, the user's read as an
    alternate, the user's clean and smudge filters run once per file state (filters.py)."""
    count = int(os.environ.get("GIT_CONFIG_COUNT", "").strip() or 0)  # " 1": as git reads it
    alternates = [_alternate(Path(common_dir).resolve() / "objects")]
    if os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES"):
        alternates.append(os.environ["GIT_ALTERNATE_OBJECT_DIRECTORIES"])
    filters = cached_filters(str(common_dir))
    # no hooks, and no file-system monitor: core.fsmonitor names a hook program (watchman's) or
    # starts a daemon, the user's setup running in trees that are not the user's
    settings = {"core.hooksPath": os.devnull, "core.fsmonitor": "false", **filters}
    env = {
        "GIT_CONFIG_COUNT": str(count + len(settings)),
        "GIT_OBJECT_DIRECTORY": str(own_folder("objects")),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.pathsep.join(alternates),
    }
    for index, (key, value) in enumerate(settings.items(), start=count):
        env[f"GIT_CONFIG_KEY_{index}"], env[f"GIT_CONFIG_VALUE_{index}"] = key, value
    if filters:
        env |= filter_environment(str(common_dir), own_folder("filters"))
    return env


def scratch_git(folder: Path, repo: git.Repo) -> git.Git:
    """Git in a scratch worktree of `repo`, isolated as the repository's own commands are."""
    cmd = git.Git(folder)
    cmd.update_environment(**isolation(repo.common_dir))
    return cmd
