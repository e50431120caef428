"""The candidates inside a package's first slow release: the hunks between the release before
it and itself, each state the target's bad tree in the environment of the bad set with the
package at the slow release, the package's patched files put first on PYTHONPATH."""

from __future__ import annotations

from pathlib import Path

from tools.config import TargetConfig
from tools.folders import cache_dir
from tools.repo.candidates import CandidateSet, Overlay, commit_changes
from tools.repo.worktree import open_repo
from tools.stack.candidates import sources
from tools.stack.environment import build_environment
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
    folder = release_folder(package, before, slow)
    low, high = release_repo(folder, files)
    found = commit_changes(open_repo(folder), low, high, own=[])
    hunks = [c.patch for c in cands.candidates if c.kind == "hunk"]
    overlay = Overlay(
        repo=str(folder),
        package=package,
        releases=(before, slow),
        tree_sha=cands.good_sha,
        tree_patches=[*hunks, *[p for p in [cands.carried_patch] if p]],
    )
    origin = f"{package} {before} -> {slow}"
    return found.model_copy(
        update={
            "candidates": [c.model_copy(update={"origin": origin}) for c in found.candidates],
            "stack": {**cands.stack, package: slow},
            "overlay": overlay,
            "good": f"{package} {before}",
        }
    )
