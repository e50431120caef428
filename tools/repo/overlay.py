"""Where the candidates are a package's hunks, inside its first slow release (issue #32)."""

from __future__ import annotations

from pydantic import BaseModel


class Overlay(BaseModel):
    """Where the candidates are a package's hunks (inside its first slow release): they apply
    to `repo` (the package's two releases, tools/stack/package_source.py, or its project's
    history, tools/stack/package_history.py) at the set's `good_sha`, put first on
    PYTHONPATH; the target's own tree is `tree_sha` with `tree_patches` (its bad state) in
    every state."""

    repo: str
    package: str
    releases: tuple[str, str]  # the release before and the first slow one
    tree_sha: str
    tree_patches: list[str]
    head: str = ""  # the slow release's commit in `repo`
    root: str = ""  # the folder of `repo` put on PYTHONPATH ("": its top)
    history: bool = False  # `repo` is the project's own history (package_history.py)
    tops: list[str] = []  # the top-level modules and folders the release installs
    note: str = ""  # where the hunks were read from, in words
