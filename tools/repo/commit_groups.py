"""The commit range as the search's first level: which first-parent commit brought each hunk.

The candidates are hunks of the whole good..working-tree diff. A commit-level search reverts
the hunks of the latest commits from the bad state, which rebuilds the tree of an earlier
commit (git bisect's probe) without leaving the engine's one way of building a state. To group
hunks by commit, one `git log -p` over the first-parent line (a merge counts as one commit: its
diff against its first parent) is read once; each hunk goes to the commit whose diff added the
most of its added lines (the latest commit that added a line's text in that file) and removed
the most of its removed lines (the first commit that removed it). Text matching, not blame:
one git call for any range, where blame costs one per hunk; the report's commit (commit_of.py)
still comes from blame. Uncommitted and untracked hunks form one more group, after the last
commit; env and server-arg candidates belong to no commit.
"""

from __future__ import annotations

from collections import Counter

import git
from pydantic import BaseModel, Field
from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from tools.repo.candidates import Candidate
from tools.repo.git_names import unquote
from tools.repo.merge_sides import SideCommit, side_commits
from tools.repo.pattern_lines import (
    changed_patterns,
    holds_pattern,
    still_there,
    written_backtracking,
)

_MARK = "debug-agent-commit "  # no patch line starts so: each commit's first line
_SHORTEST = 4  # shorter line texts (`)`, `else:`) say nothing about where a hunk came from


class RangeCommit(BaseModel):
    sha: str
    subject: str
    author: str = ""
    date: str = ""  # the author date, ISO 8601
    files: list[str] = Field(default_factory=list)  # the paths its first-parent diff touches
    # the lines of regular expressions it changes, by file (tools/repo/pattern_lines.py)
    patterns: dict[str, int] = Field(default_factory=dict)
    # the lines it writes with a pattern that can backtrack catastrophically, by file, those
    # the bad end still holds (tools/repo/backtracking.py)
    backtracking: dict[str, list[str]] = Field(default_factory=dict)
    # a merge: the base and the commits its second parent brought (oldest first)
    merge_base: str = ""
    side: list[SideCommit] = Field(default_factory=list)


class CommitGroups(BaseModel):
    """The first-parent commits of good..HEAD, oldest first, and each hunk's place among them
    (`len(commits)`: not committed yet)."""

    commits: list[RangeCommit] = Field(default_factory=list)
    of: dict[str, int] = Field(default_factory=dict)
    from_good: bool = False  # good is an ancestor of HEAD: each commit's tree descends from it

    @property
    def uncommitted(self) -> int:
        return len(self.commits)

    def label(self, index: int) -> str:
        if index >= len(self.commits):
            return "the uncommitted changes"
        commit = self.commits[index]
        return f"{commit.sha[:8]} {commit.subject!r}"


class _Lines(BaseModel):
    added: dict[tuple[str, str], int] = Field(default_factory=dict)  # latest commit adding it
    removed: dict[tuple[str, str], int] = Field(default_factory=dict)  # first commit removing it
    touched: dict[str, int] = Field(default_factory=dict)  # latest commit changing the file


def _read_log(repo: git.Repo, good_sha: str, head: str) -> tuple[list[RangeCommit], _Lines]:
    text = repo.git.log(
        "--first-parent",
        "--diff-merges=first-parent",
        "--reverse",
        "--no-renames",
        "--no-color",
        "-U0",
        "-p",
        f"--format={_MARK}%H%x1f%an%x1f%aI%x1f%s",
        f"{good_sha}..{head}",
        strip_newline_in_stdout=False,
    )
    commits: list[RangeCommit] = []
    lines = _Lines()
    for chunk in ("\n" + text).split("\n" + _MARK)[1:]:
        head, _, patch = chunk.partition("\n")
        sha, author, date, subject = (head.split("\x1f", 3) + ["", "", ""])[:4]
        index = len(commits)
        commit = RangeCommit(sha=sha, subject=subject, author=author, date=date)
        commits.append(commit)
        _read_patch(patch, commit, index, lines)
    return commits, lines


def _read_patch(patch: str, commit: RangeCommit, index: int, lines: _Lines) -> None:
    """One commit's patch: its files, the lines it added and removed, the patterns it changed."""
    try:
        files = PatchSet(patch)
    except UnidiffParseError:  # a patch unidiff cannot read: the commit keeps no lines
        return
    changes: dict[str, tuple[Counter[str], Counter[str]]] = {}
    for pfile in files:
        path = unquote(pfile.path)
        commit.files.append(path)
        lines.touched[path] = index
        added, removed = changes.setdefault(path, (Counter(), Counter()))
        for line in (line for hunk in pfile for line in hunk):
            text = line.value.strip()
            side = added if line.is_added else removed if line.is_removed else None
            if side is not None and holds_pattern(text):  # the patterns it changes, by text
                side[text] += 1
            if len(text) < _SHORTEST:
                continue
            if line.is_added:
                lines.added[(path, text)] = index
            elif line.is_removed:
                lines.removed.setdefault((path, text), index)
    commit.patterns = changed_patterns(changes)
    commit.backtracking = written_backtracking(changes)


def _place(c: Candidate, lines: _Lines, uncommitted: int) -> int | None:
    if c.kind != "hunk" or not c.file:
        return None
    if c.origin in ("uncommitted", "untracked"):
        return uncommitted
    votes: Counter[int] = Counter()
    for text in c.added_lines():
        if (index := lines.added.get((c.file, text.strip()))) is not None:
            votes[index] += 1
    for text in c.removed_lines():
        if (index := lines.removed.get((c.file, text.strip()))) is not None:
            votes[index] += 1
    if votes:  # the most lines; on a tie the later commit (it had the last word)
        return max(votes, key=lambda index: (votes[index], index))
    return lines.touched.get(c.file, uncommitted)


def _keep_present(repo: git.Repo, commits: list[RangeCommit], head: str) -> None:
    """Each commit's backtracking-prone lines, those the bad end still holds."""
    written = {line for c in commits for lines in c.backtracking.values() for line in lines}
    present = still_there(repo, written, head)
    for c in commits:
        kept = {path: [t for t in lines if t in present] for path, lines in c.backtracking.items()}
        c.backtracking = {path: lines for path, lines in kept.items() if lines}


def commit_groups(
    repo: git.Repo, good_sha: str, candidates: list[Candidate], head: str = "HEAD"
) -> CommitGroups:
    """Each hunk's first-parent commit after `good_sha` up to `head`; no commits when `head` is
    `good_sha` or git cannot list the range (a shallow clone): then there is no commit level."""
    try:
        commits, lines = _read_log(repo, good_sha, head)
    except git.GitCommandError:
        return CommitGroups()
    if not commits:
        return CommitGroups()
    groups = CommitGroups(
        commits=commits, from_good=repo.is_ancestor(repo.commit(good_sha), repo.commit(head))
    )
    for commit in commits:
        commit.merge_base, commit.side = side_commits(repo, commit.sha)
    _keep_present(repo, commits, head)
    for c in candidates:
        index = _place(c, lines, len(commits))
        if index is not None:
            groups.of[c.id] = index
    return groups
