"""A first bad commit read part of the way, which the confirmation does not bear out.

Bisection believes a partial step on two launches beside its parent's launched again. On a
machine whose noise is wider than the references showed, that can be noise: on a 2-core VM
one process in five ran markdown2's tree at 21 ms where the others ran it at 12 (a pure
Python loop took 29 to 49 ms from one process to the next), and a harmless merge read 21.5
twice. The search over the rest of the range then confirms culprits both ways. Where those
culprits, applied alone to the good end, reproduce the regression at the bad level (far beyond
the share the partial step would leave them), and one later commit wrote them all, with its
parent known good, the partial step is not borne out: that commit is the first bad commit, by
its culprits, and the report says so and why.
"""

from __future__ import annotations

from collections.abc import Callable

import git

from agent.levels import between, noise
from agent.phases.hot_commit import hot_pair, range_commits
from agent.state import InvestigationState, RangeState
from agent.stats import ALPHA, level, p_equal


def _written_by(state: InvestigationState, repo: git.Repo) -> str | None:
    """The one commit of the range that wrote most of every culprit's lines (None: several,
    or none git can name)."""
    assert state.confirmation is not None
    found = set()
    for cid in state.confirmation.culprits:
        commits = range_commits(state, repo, state.candidate(cid))
        found.add(commits[0].sha if commits else None)
    return found.pop() if len(found) == 1 else None


def _beyond_the_step(state: InvestigationState, partial: RangeState) -> str | None:
    """Why the confirmed culprits leave no room for `partial`'s step (None: they do): applied
    to good they reproduce what the step would leave them and more than half the step besides,
    at the bad level (not significantly apart from it)."""
    assert state.confirmation is not None
    apply_key = state.confirmation.apply_key
    step = 1 - between(state, partial.key, state.bad_key, state.good_key).r
    reproduced = between(state, apply_key, state.good_key, state.bad_key).r
    applied, bad = state.configs[apply_key].values, state.configs[state.bad_key].values
    p = p_equal(level(applied), len(applied), level(bad), len(bad), noise(state))
    if not 0 < step < 1 or reproduced <= 1 - step / 2 or p <= ALPHA:
        return None
    return (
        f"applied alone to the good end they reproduce {reproduced:.0%} of the regression, at "
        f"the bad level (p = {p:.2g} against it), where a step of {step:.0%} at "
        f"{(partial.sha or '')[:12]} would leave them {1 - step:.0%}"
    )


def refute_partial_step(
    state: InvestigationState, repo: git.Repo, log: Callable[..., None]
) -> None:
    """Where the confirmation contradicts a partial first bad commit, name the commit that
    wrote the culprits instead (module docstring); else leave the bisection as it is."""
    b, conf = state.bisection, state.confirmation
    if b is None or not b.done or b.narrowed or conf is None or state.status != "confirmed":
        return
    partial = b.first_bad
    if not partial.partial or not partial.key or partial.key not in state.configs:
        return
    why = _beyond_the_step(state, partial)
    sha = _written_by(state, repo) if why else None
    pair = hot_pair(repo, sha, b.everything) if sha and sha != partial.sha else []
    if why is None or not pair:  # [the commit that wrote them, its parent]
        return
    culprit, parent = pair
    names = ", ".join(conf.culprits)
    said = (
        f"{(partial.sha or '')[:12]}'s step part of the way "
        f"({', '.join(f'{v:.3g}' for v in partial.values)}) is not borne out: the culprits "
        f"{{{names}}} explain the whole gap ({why}); they were written by "
        f"{(culprit.sha or '')[:12]} {culprit.subject!r}, whose parent {(parent.sha or '')[:12]} "
    )
    if parent.verdict == "good":
        culprit.verdict = "bad"
        culprit.why = f"not launched: it wrote {{{names}}}, confirmed both ways; {why}"
        if b.mainline:  # a merge's side line was entered: it stays among what was tried
            b.tried = [*b.tried, *b.states]
        else:
            b.mainline = b.states
        b.states, b.low, b.high, b.done = [parent, culprit], 0, 1, True
        said += (
            f"is good ({parent.why or 'measured'}): the first bad commit, by its culprits (the "
            "launch noise is wider than the references showed)"
        )
    elif parent.verdict:
        said += f"measured {parent.verdict}: which commit is the first bad one stays open"
    else:
        said += "was not measured: launch it to tell which of the two is the first bad commit"
    state.notes.append(said)
    log("report", "verdict", said)
