"""Changes git does not show. A file marked assume-unchanged, or skip-worktree while it is there
on disk, may differ from the index and git reports nothing: the bad state built from git's
diff lacked the change the working tree ran with ("no regression" where there was one). A
skip-worktree file not on disk is one a sparse checkout leaves out: unchanged, no deletion.

Standard library only: the node's helper uses it too (uploaded beside it)."""

from __future__ import annotations

import os

LISTING = ("ls-files", "-v", "-z")  # the git command whose output `hidden_changes` reads


def hidden_changes(listing: str, root: str) -> dict[str, list[str]]:
    """From `git ls-files -v -z` run at `root`: the `git update-index` flag that shows each
    hidden change again, and the paths that need it (none: an empty dict)."""
    hidden: dict[str, list[str]] = {}
    for entry in (e for e in listing.split("\0") if len(e) > 2):
        tag, path = entry[0], entry[2:]
        if tag.islower():  # lowercase: assume-unchanged
            hidden.setdefault("--no-assume-unchanged", []).append(path)
        if tag in "Ss" and os.path.lexists(os.path.join(root, path)):
            hidden.setdefault("--no-skip-worktree", []).append(path)
    return hidden


def nul_separated(paths: list[str]) -> bytes:
    """`paths` as `git update-index -z --stdin` reads them (a command line has a limit)."""
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
