"""The candidates inside a package's first slow release: the hunks between the release before
it and itself, each state the target's bad tree in the environment of the bad set with the
package at the slow release, the package's patched files put first on PYTHONPATH.

Where `[stack] repos` names the package's git repository and its tags and layout allow
(package_history.py), the hunks are the project's own, between the two releases' commits, and
the commits between are searched as a range's are; otherwise they are read from the files the
two releases installed (package_source.py)."""

from __future__ import annotations

from pathlib import Path

from packaging.utils import canonicalize_name

from tools.config import TargetConfig
from tools.errors import ToolError
from tools.folders import cache_dir
from tools.repo.candidates import Candidate, CandidateSet, commit_changes
from tools.repo.overlay import Overlay
from tools.repo.worktree import open_repo
from tools.stack.candidates import sources
from tools.stack.environment import build_environment
from tools.stack.package_history import (
    history_changes,
    history_clone,
    release_commit,
    source_root,
    top_names,
)
from tools.stack.package_source import package_files, release_folder, release_repo


def release_candidates(
    config: TargetConfig,
    config_dir: Path,
    cands: CandidateSet,
    package: str,
    releases: tuple[str, str],
) -> CandidateSet:
    """The hunks of `package` from release `before` to `slow` (`releases`), as candidates over
    `cands` (the investigation's own: its bad tree and bad package set)."""
    before, slow = releases
    assert config.stack is not None and cands.stack is not None
    base = config.stack.python or config.python
    where = sources(config.stack, config_dir)
    files = []
    for release in (before, slow):
        pins = {**cands.stack, package: release}
        built = build_environment(pins, cache_dir() / "envs", base, where)
        files.append((f"{package} {release}", package_files(Path(built.folder), package)))
    overlay = Overlay(
        repo="",
        package=package,
        releases=(before, slow),
        tree_sha=cands.good_sha,
        tree_patches=[c.patch for c in cands.candidates if c.kind == "hunk"]
        + [p for p in [cands.carried_patch] if p],
    )
    repos = {canonicalize_name(k): v for k, v in config.stack.repos.items()}
    source = repos.get(canonicalize_name(package))
    why = "no [stack] repos entry names its git repository"
    if source is not None:
        try:
            return _from_history(source, config_dir, cands, overlay, files[1][1])
        except ToolError as e:
            why = str(e)
    folder = release_folder(package, before, slow)
    low, high = release_repo(folder, files)
    found = commit_changes(open_repo(folder), low, high, own=[])
    note = f"the files the two releases installed, compared ({why})"
    overlay = overlay.model_copy(update={"repo": str(folder), "head": high, "note": note})
    return _inside(cands, found, overlay)


def _from_history(
    source: str, config_dir: Path, cands: CandidateSet, overlay: Overlay, installed: dict
) -> CandidateSet:
    """The hunks between the two releases' commits in the package's own repository; a
    ToolError says why it cannot be read so."""
    folder = history_clone(source, config_dir)
    before, slow = overlay.releases
    ends = [release_commit(folder, overlay.package, release) for release in (before, slow)]
    missing = [r for r, end in zip((before, slow), ends, strict=True) if end is None]
    if missing:
        raise ToolError(f"no tag of {source} names release {' or '.join(missing)}")
    (low_tag, low), (high_tag, high) = ends  # type: ignore[misc]
    root = source_root(folder, high, installed)
    if root is None:
        raise ToolError(
            f"the files {overlay.package} {slow} installed do not all lie in one folder of "
            f"its tree at {high_tag} (compiled or generated at build time)"
        )
    tops = sorted(top_names(installed))
    found = history_changes(folder, low, high, root, tops)
    note = (
        f"the project's git history, {low_tag}..{high_tag} of {source}"
        f" ({root or 'its top'}/ on PYTHONPATH)"
    )
    update = {"repo": str(folder), "head": high, "root": root, "history": True, "tops": tops}
    return _inside(cands, found, overlay.model_copy(update={**update, "note": note}))


def _origin(found: CandidateSet, overlay: Overlay) -> list[Candidate]:
    """The hunks found, each marked as the package's release's ("name before -> slow")."""
    origin = f"{overlay.package} {overlay.releases[0]} -> {overlay.releases[1]}"
    return [c.model_copy(update={"origin": origin}) for c in found.candidates]


def _inside(cands: CandidateSet, found: CandidateSet, overlay: Overlay) -> CandidateSet:
    return found.model_copy(
        update={
            "candidates": _origin(found, overlay),
            "stack": {**(cands.stack or {}), overlay.package: overlay.releases[1]},
            "overlay": overlay,
            "good": f"{overlay.package} {overlay.releases[0]}",
        }
    )


def commit_candidates(cands: CandidateSet, low: str, high: str) -> CandidateSet:
    """Inside a release read from the project's history: the hunks of its commits from `low`
    to `high` (the first slow commit), the rest as `cands` has it."""
    overlay = cands.overlay
    assert overlay is not None and overlay.history
    found = history_changes(Path(overlay.repo), low, high, overlay.root, overlay.tops)
    return cands.model_copy(
        update={
            "candidates": _origin(found, overlay),
            "good": found.good,
            "good_sha": found.good_sha,
        }
    )
