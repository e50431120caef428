"""The commit that wrote the hot lines, probed first, as Pinpoint does.

The profile ties a hunk of the range's diff to the function that spends the time; `git blame`
names the commit that wrote that hunk's lines, wherever it sits: on the first-parent line (the
bisection puts the prior mass there, agent/phases/bisect.py) or on a merged branch, where a
first-parent bisection reaches it only after the merge and its first parent. Off the line, the
commit and its parent are probed first: bad and good, it is a first bad commit as git bisect
defines one (bad, its parents good) in two probes; anything else, and the bisection goes on as
before, those launches kept for it (a state is configured by its commit, once).
"""

from __future__ import annotations

import git

from agent.state import InvestigationState, RangeState
from tools.repo.candidates import Candidate
from tools.repo.commit_of import CommitInfo, commits_of

# a hunk tied to at least this share of the gap speaks for its commit: two probes that find the
# first bad commit when the tie is right, and stay with the bisection when not, pay from about a
# quarter of the gap on; werkzeug's tie read 39-43 % in some runs and 54-71 % in others
FOCUS = 0.35


def hot_tie(state: InvestigationState) -> tuple[float, str] | None:
    """(share, candidate id) of the kept hunk the profile ties to the largest share of the gap,
    FOCUS or more."""
    tied = [
        (h.profile_weight, cid)
        for cid, h in state.hypotheses.items()
        if h.status != "dropped" and h.profile_weight >= FOCUS
    ]
    return max(tied) if tied else None


def hot_commit(state: InvestigationState, repo: git.Repo | None) -> str | None:
    """The commit that wrote most of the hot hunk's lines (None: no hot hunk, or its lines are
    not committed, or git cannot say)."""
    tie = hot_tie(state)
    if repo is None or tie is None:
        return None
    hunk = next((c for c in state.candidates if c.id == tie[1]), None)
    found = commits_of(repo, state.good_sha, hunk) if hunk is not None else []
    return found[0].sha if found else None


def hot_pair(repo: git.Repo, sha: str, known: list[RangeState]) -> list[RangeState]:
    """[the commit, its parent] as bisection states; [] for a merge (its first parent is on a
    line a bisection reaches as it is). The parent carries what `known` says of it (measured,
    or good as an ancestor of a state measured good), else it is a state to probe."""
    try:
        commit = repo.commit(sha)
        if len(commit.parents) != 1:
            return []
        parent = commit.parents[0]
        before = RangeState(sha=parent.hexsha, subject=str(parent.summary))
        if (said := known_verdict(repo, parent.hexsha, known)) is not None:
            before.key, before.verdict = said.key, said.verdict
            before.why = said.why or f"measured {said.verdict}"
    except (ValueError, git.GitCommandError):
        return []
    hot = RangeState(
        sha=sha,
        subject=str(commit.summary),
        author=f"{commit.author.name} <{commit.author.email}>",
        date=commit.authored_datetime.isoformat(timespec="seconds"),
        parent=parent.hexsha,
    )
    return [hot, before]


def known_verdict(repo: git.Repo, sha: str, known: list[RangeState]) -> RangeState | None:
    """`sha` as `known` measured it, or good as an ancestor of a commit measured good (git
    bisect's rule); None when nothing known says."""
    for s in known:
        if s.sha == sha and s.verdict:
            return s
    for s in known:
        if s.verdict != "good" or not s.sha:
            continue
        try:
            if repo.is_ancestor(repo.commit(sha), repo.commit(s.sha)):
                why = f"an ancestor of {s.sha[:12]}, measured good"
                return RangeState(sha=sha, verdict="good", why=why)
        except (ValueError, git.GitCommandError):
            continue
    return None


def range_commits(state: InvestigationState, repo: git.Repo, c: Candidate) -> list[CommitInfo]:
    """The commits of the investigated range that wrote `c`'s lines, most first: blamed over
    the bisected range where there is one (a package's history: to its bad end)."""
    b = state.bisection
    if b is None:
        return commits_of(repo, state.good_sha, c)
    return commits_of(repo, b.range_good_sha, c, (b.mainline or b.states)[-1].sha)
