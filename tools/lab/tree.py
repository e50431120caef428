"""Builds a lab repository: the template committed as the good state, changes left uncommitted."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import git
from unidiff import PatchSet

from tools.lab.changes import Change, LabError
from tools.lab.truth import TruthEntry

TEMPLATE = Path(__file__).parent / "sglang-tree"
LAB_ACTOR = git.Actor("debug-agent lab", "lab@debug-agent.invalid")
# a fixed date makes the good commit's hash depend only on the scenario
LAB_DATE = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)


def copy_template(dest: Path, template: Path) -> None:
    for src in sorted(template.rglob("*.py")):
        if "__pycache__" in src.parts:
            continue
        target = dest / src.relative_to(template)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)


def prepare_dir(dest: Path) -> None:
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise LabError(f"{dest} exists and is not an empty folder")
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # a parent that is a file, read-only, or not there to be made
        raise LabError(f"cannot create the lab folder {dest}: {e.strerror or e}") from None


def commit_good(dest: Path, message: str) -> git.Repo:
    """Everything in `dest` committed as the known-good HEAD (fixed author and date)."""
    (dest / ".gitignore").write_text("__pycache__/\n*.pyc\ndebug-agent.toml\n.debug-agent-logs/\n")
    repo = git.Repo.init(dest, initial_branch="main")
    repo.git.add(A=True)
    repo.index.commit(
        message, author=LAB_ACTOR, committer=LAB_ACTOR, author_date=LAB_DATE, commit_date=LAB_DATE
    )
    return repo


def build_repo(
    dest: Path,
    changes: list[Change],
    base_changes: Sequence[Change] = (),
    template: Path = TEMPLATE,
    message: str = "sglang 0.5.23 (lab): known-good state",
) -> git.Repo:
    """Template (+ base_changes) committed as HEAD; `changes` applied to the working tree."""
    copy_template(dest, template)
    for change in base_changes:
        change.apply(dest)
    repo = commit_good(dest, message)
    new_files = []
    for change in changes:
        if not (dest / change.file).exists():
            new_files.append(change.file)
        change.apply(dest)
    if new_files:  # intent-to-add, so that `git diff HEAD` shows new files like edits
        repo.git.add("--intent-to-add", "--", *new_files)
    return repo


def locate_hunks(repo: git.Repo, changes: list[Change], ref: str = "HEAD") -> list[TruthEntry]:
    """The `git diff <ref>` hunk that holds each change (same order as `changes`)."""
    patch = PatchSet(repo.git.diff(ref, "-U3", strip_newline_in_stdout=False))
    entries = []
    for change in changes:
        marker = change.marker
        header = None
        for pfile in patch:
            if pfile.path != change.file:
                continue
            for hunk in pfile:
                if any(
                    line.value.rstrip("\n") == marker
                    for line in hunk
                    if line.is_added or line.is_removed
                ):
                    header = (
                        f"@@ -{hunk.source_start},{hunk.source_length} "
                        f"+{hunk.target_start},{hunk.target_length} @@"
                    )
        if header is None:
            raise LabError(f"change {change.kind!r} in {change.file} has no hunk in the diff")
        entries.append(
            TruthEntry(
                file=change.file,
                hunk=header,
                marker=marker.strip(),
                kind=change.kind,
                why=change.why,
            )
        )
    return entries


def hunk_roles(repo: git.Repo, changes: list[Change]) -> dict[str, list[TruthEntry]]:
    """The hunks of `changes` in `git diff HEAD`, by role: culprit, decoy, companion."""
    roles: dict[str, list[TruthEntry]] = {"culprit": [], "decoy": [], "companion": []}
    for entry, change in zip(locate_hunks(repo, changes), changes, strict=True):
        roles[change.role].append(entry)
    return roles


def hunk_truth(repo: git.Repo, changes: list[Change]) -> tuple[list[TruthEntry], list[TruthEntry]]:
    """The hunks of `changes` in `git diff HEAD`: (culprits, decoys)."""
    roles = hunk_roles(repo, changes)
    return roles["culprit"], roles["decoy"]
