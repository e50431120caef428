"""Changes too big to travel in a patch: a binary file past BIG_BINARY, or a text change whose
diff is (a 20 MB data literal). Each is named, in no state, and the tree check points at it."""

from __future__ import annotations

import contextlib
from pathlib import Path

import git

# a binary change is one patch, both sides in base85: past this size (or a text change's diff
# past it) it would weigh on every state, checkpoint and transcript that holds the candidate
BIG_BINARY = 8 << 20


def too_big(path: str, what: str) -> str:
    return (
        f"{path}: {what}, too big to travel in a patch: in no state (commit it, or ignore it "
        "if the server never reads it)"
    )


def largest(repo: git.Repo, good_sha: str, path: str, to: str | None = None) -> int:
    """The larger of a file's sizes in the good commit and in the working tree or commit `to`
    (a binary patch holds both)."""
    here = Path(str(repo.working_tree_dir)) / path
    sizes = [here.lstat().st_size] if to is None and (here.is_symlink() or here.exists()) else []
    for sha in [good_sha, *([to] if to else [])]:
        with contextlib.suppress(git.GitCommandError):
            sizes.append(int(repo.git.cat_file("-s", f"{sha}:{path}")))
    return max(sizes, default=0)
