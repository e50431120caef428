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


def commit_split(
    state: InvestigationState, groups: list[list[str]], weight: dict[str, float]
) -> tuple[list[str], list[str]] | None:
    """The later commits (about half the prior mass) and the earlier ones; None when the
    candidates sit in one commit. `groups` must move together (links read from the code): a
    group whose hunks span commits, such as a hunk that merged the lines of two commits and the
    deletion it depends on, sits at its earliest commit, so reverting the later commits leaves
    it applied as a whole instead of tearing it apart."""
    placed = [(min(place(state, cid) for cid in group), group) for group in groups]
    positions = sorted({at for at, _ in placed}, reverse=True)
    if not state.commits.commits or len(positions) < 2:
        return None
    mass = dict.fromkeys(positions, 0.0)
    for at, group in placed:
        mass[at] += sum(weight[cid] for cid in group)
    total, taken, cut = sum(mass.values()), 0.0, positions[0]
    for p in positions[:-1]:  # the earliest commit always stays in the second half
        if taken >= total / 2:
            break
        taken, cut = taken + mass[p], p
    later = [cid for at, group in placed if at >= cut for cid in group]
    return later, [cid for at, group in placed if at < cut for cid in group]


def describe(state: InvestigationState, ids: list[str]) -> str:
    """`ids` as the commits they come from: "3 commits, 1a2b3c4d 'Fix ...' to 5e6f7a8b '...'"."""
    positions = sorted({place(state, cid) for cid in ids if place(state, cid) != _NO_COMMIT})
    if not positions:
        return ""
    first, last = state.commits.label(positions[0]), state.commits.label(positions[-1])
    if len(positions) == 1:
        return first
    return f"{len(positions)} commits, {first} to {last}"
