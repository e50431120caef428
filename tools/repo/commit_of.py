"""Which commit brought a hunk: what a maintainer needs beside the hunk to act on it.

The candidates are hunks of the whole good..working-tree diff (or good..a bad commit: a
package's release in its project's history), so one hunk may hold lines of several commits.
Its added lines are blamed in the working tree (`git blame --contents`: lines not committed
yet are the null commit) or at the bad commit; its removed lines are blamed in reverse over
good..HEAD (or the bad commit), which gives the last commit that still had each line, and the
commit after it on the way there removed it. The commit with most of the hunk's lines comes
first. Only commits after the good ref count: a line blamed further back was moved, not
written, by the range.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import git

from tools.code_paths.dependencies import changed_line_numbers
from tools.repo.candidates import Candidate
from tools.repo.commit_info import CommitInfo

NULL_SHA = "0" * 40
# "Fix the cache (#1234)" (squash merges), "Merge pull request #1234 from ..." (merge commits)
_PR = re.compile(r"\(#(\d+)\)\s*$|^Merge pull request #(\d+)\b")


def _info(commit: git.Commit, lines: int) -> CommitInfo:
    subject = str(commit.summary)
    match = _PR.search(subject)
    return CommitInfo(
        sha=commit.hexsha,
        subject=subject,
        author=f"{commit.author.name} <{commit.author.email}>",
        date=datetime.fromtimestamp(commit.authored_date, UTC).isoformat(timespec="seconds"),
        pr=int(match.group(1) or match.group(2)) if match else None,
        lines=lines,
    )


def commit_info(repo: git.Repo, sha: str) -> CommitInfo:
    """One commit as the report names it."""
    return _info(repo.commit(sha), 0)


def _ranges(numbers: set[int]) -> list[str]:
    """`-L` arguments for sorted line numbers, consecutive ones joined."""
    out: list[str] = []
    for n in sorted(numbers):
        if out and int(out[-1].split(",")[1]) == n - 1:
            out[-1] = f"{out[-1].split(',')[0]},{n}"
        else:
            out.append(f"{n},{n}")
    return out


def _blame(repo: git.Repo, rev: str | None, path: str, **options: object) -> list[tuple[str, int]]:
    """(commit sha, line count) of each block `git blame` gives."""
    found = []
    for entry in repo.blame(rev, path, **options) or []:  # type: ignore[arg-type]
        commit, lines = entry[0], entry[1]
        if isinstance(commit, git.Commit) and isinstance(lines, list):
            found.append((commit.hexsha, len(lines)))
    return found


def _added_by(repo: git.Repo, bad: str | None, path: str, numbers: set[int]) -> Counter[str]:
    """Commits of the bad file's lines `numbers`: at commit `bad`, or in the working tree (the
    null commit: not committed)."""
    found: Counter[str] = Counter()
    options: dict[str, object] = {"L": _ranges(numbers)}
    if bad is None:
        here = Path(str(repo.working_tree_dir)) / path
        options |= {"contents": str(here), "allow_unsafe_options": True}
    for sha, lines in _blame(repo, bad, path, **options):
        found[sha] += lines
    return found


def _removed_by(
    repo: git.Repo, good_sha: str, bad: str | None, path: str, numbers: set[int]
) -> Counter[str]:
    """Commits that removed the good file's lines `numbers` on the way to `bad` (None: HEAD;
    null: removed in the working tree, not committed)."""
    head = repo.commit(bad or "HEAD").hexsha
    found: Counter[str] = Counter()
    for last, lines in _blame(repo, f"{good_sha}..{head}", path, reverse=True, L=_ranges(numbers)):
        if last == head:  # still there at the bad commit: the working tree removed it
            found[NULL_SHA] += lines
            continue
        found[_remover(repo, last, head, path)] += lines
    return found


def _remover(repo: git.Repo, last: str, head: str, path: str) -> str:
    """The child of `last` on the way to `head` that changed `path` (the one that removed a
    line `last` still had; on a merged history, the branch that did it)."""
    rows = [
        r.split()
        for r in repo.git.rev_list("--ancestry-path", "--parents", f"{last}..{head}").splitlines()
    ]
    # a merge's change against `last` came from its other branch: the commits there go first
    children = [row[0] for row in sorted(rows, key=len) if last in row[1:]]
    for child in children:
        if repo.git.diff("--name-only", last, child, "--", path).strip():
            return child
    return children[0] if children else NULL_SHA


def commits_of(
    repo: git.Repo, good_sha: str, c: Candidate, bad_sha: str | None = None
) -> list[CommitInfo]:
    """The commits after `good_sha` that brought the hunk's lines, most lines first; none for
    a hunk (or the part of one) that is not committed, or where git cannot say. The hunk is of
    the diff from `good_sha` to the working tree, or to `bad_sha` where one is given."""
    if c.kind != "hunk" or not c.file or c.old_range() is None:
        return []
    removed, added = changed_line_numbers(c)
    found: Counter[str] = Counter()
    try:
        if added:
            found += _added_by(repo, bad_sha, c.file, added)
        if removed:
            found += _removed_by(repo, good_sha, bad_sha, c.file, removed)
    except (git.GitCommandError, ValueError, OSError):  # an untracked file, a shallow history
        return []
    infos = []
    for sha, lines in found.most_common():
        if sha == NULL_SHA or repo.is_ancestor(repo.commit(sha), repo.commit(good_sha)):
            continue
        infos.append(_info(repo.commit(sha), lines))
    return infos
