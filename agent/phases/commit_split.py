"""The search's first level on a commit range: whole commits, in history order, before hunks.

Reverting the hunks of the latest commits from the bad state rebuilds the tree of an earlier
commit, so a split that tries the later commits first probes what git bisect would (weighted
by the candidates' priors instead of by count), and every probe is a tree that existed. Once a
task's candidates sit in one commit, the search goes on inside it, by file and hunk, with the
rest of the range applied.
"""

from __future__ import annotations

from agent.state import InvestigationState

_NO_COMMIT = 1 << 30  # env and server-arg candidates: the launch's, newer than any commit


def place(state: InvestigationState, cid: str) -> int:
    """The candidate's position in the range (the uncommitted changes after the last commit)."""
    return state.commits.of.get(cid, _NO_COMMIT)


def spans_commits(state: InvestigationState, ids: list[str]) -> bool:
    return bool(state.commits.commits) and len({place(state, cid) for cid in ids}) > 1


def later_first(state: InvestigationState, later: list[str], earlier: list[str]) -> bool:
    """Whether `later` holds only changes after every one of `earlier` (a bisect probe)."""
    return bool(later and earlier) and min(place(state, c) for c in later) > max(
        place(state, c) for c in earlier
    )


def commit_split(
    state: InvestigationState, ids: list[str], weight: dict[str, float]
) -> tuple[list[str], list[str]] | None:
    """The later commits (about half the prior mass) and the earlier ones; None when `ids` sit
    in one commit."""
    if not spans_commits(state, ids):
        return None
    positions = sorted({place(state, cid) for cid in ids}, reverse=True)
    mass = {p: sum(weight[c] for c in ids if place(state, c) == p) for p in positions}
    total, taken, cut = sum(mass.values()), 0.0, positions[0]
    for p in positions[:-1]:  # the earliest commit always stays in the second half
        if taken >= total / 2:
            break
        taken, cut = taken + mass[p], p
    later = [c for c in ids if place(state, c) >= cut]
    return later, [c for c in ids if place(state, c) < cut]


def describe(state: InvestigationState, ids: list[str]) -> str:
    """`ids` as the commits they come from: "3 commits, 1a2b3c4d 'Fix ...' to 5e6f7a8b '...'"."""
    positions = sorted({place(state, cid) for cid in ids if place(state, cid) != _NO_COMMIT})
    if not positions:
        return ""
    first, last = state.commits.label(positions[0]), state.commits.label(positions[-1])
    if len(positions) == 1:
        return first
    return f"{len(positions)} commits, {first} to {last}"
