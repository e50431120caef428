"""The commit level's two turns: the bisection laid out with the hypotheses, and after it the
investigation going on inside the first bad commit alone.

Its parent's tree becomes the good reference and its own tree the bad one, each with the
launches the bisection made of it; the candidates become the hunks of `diff parent commit`
(reverted on the commit's tree, applied on the parent's). The range's two ends stay in the
state as the commits they are, so their launches still count in the noise and the report can
say how much of the whole range's gap the commit explains.
"""

from __future__ import annotations

from collections.abc import Callable

import git

from agent.levels import all_ids, ensure_config, update_levels
from agent.narrow_release import into_release
from agent.phases import lines
from agent.phases.bisect import COMMIT_KEY, bisection_of
from agent.runner import Runner
from agent.state import Bisection, InvestigationState, Launch, RangeState
from tools.secrets import mask

RANGE_BAD = "range-bad"


def lay_out(
    state: InvestigationState, repo: git.Repo, remote: bool, log: Callable[..., None]
) -> None:
    """The bisection, once, with the hypotheses (its weights are their priors)."""
    if state.bisection is None:
        why_not: list[str] = []
        state.bisection = bisection_of(state, why_not, remote, repo)
        lines.bisection(state, why_not, log)


def narrow(state: InvestigationState, runner: Runner, log: Callable[..., None]) -> None:
    """Once the bisection named the first bad commit: the state re-based on it (or, when its
    diff holds no candidate, the range searched as a whole)."""
    into_release(state, runner, log)  # a [stack]'s package, once its first slow release is known
    b = state.bisection
    if b is None or not b.done or b.narrowed or b.whole:
        return
    high = b.first_bad
    # on a merge's side line, the first commit's parent is older than the merge base (good
    # by ancestry, not measured): its own diff is against its parent, measured next
    parent = b.parent_sha
    cands = runner.narrowed(parent, high.sha)
    if not cands.candidates:
        b.whole = True
        log("plan", "thought", f"{_span(b)} changes nothing a state can hold: searched as a whole")
        return
    _rekey_end(
        state, state.good_key, COMMIT_KEY + b.range_good_sha[:12], f"good {b.range_good_sha[:8]}"
    )
    _rekey_end(state, state.bad_key, RANGE_BAD, "bad (the range's end)")
    # the parent's launches, where the bisection measured it (else the good end is measured)
    measured = [s for s in b.everything if s.sha == parent and s.key in state.configs]
    good_launches = _take(state, measured[0]) if measured else []
    bad_launches = _take(state, high)
    state.commits = state.commits.model_copy(update={"of": {}})  # the range's placement
    b.range_ids = [c.id for c in state.candidates]  # a resumed session checks them
    state.candidates = mask(cands).candidates
    state.good_sha = cands.good_sha
    state.hypotheses, state.dropped, state.links = {}, [], []
    state.tasks, state.findings, state.confirmation = [], [], None
    new_good = ensure_config(state, set())
    new_bad = ensure_config(state, all_ids(state))
    new_good.launches, new_bad.launches = good_launches, bad_launches
    new_good.label, new_bad.label = f"good ({parent[:8]})", f"bad ({_short(high)})"
    state.good_key, state.bad_key = new_good.key, new_bad.key
    for s in b.everything:  # the first bad commit may stand twice (a merge)
        if s.sha == high.sha:
            s.key = new_bad.key
    for s in measured:
        s.key = new_good.key
    b.narrowed = True
    for config in state.configs.values():  # levels of the range's ends: judged anew
        config.level = None
    update_levels(state)  # the bisection's probes pool the noise around the new ends
    state.since_reference = 0  # both new references were measured by the bisection itself
    log(
        "plan",
        "thought",
        f"searching inside {_span(b)}: {len(state.candidates)} hunk(s), reverted on its tree "
        "and applied on its parent's",
    )


def _short(s: RangeState) -> str:
    return "the uncommitted changes" if s.sha is None else s.sha[:8]


def _span(b: Bisection) -> str:
    skipped = b.skipped_between()
    if skipped:
        return f"{_short(b.parent)}..{_short(b.first_bad)} ({len(skipped) + 1} commits)"
    return f"the first bad commit {_short(b.first_bad)}"


def _rekey_end(state: InvestigationState, key: str, new_key: str, label: str) -> None:
    """A reference of the whole range kept as the state it is (its key frees the reference's)."""
    config = state.configs.pop(key)
    state.configs[new_key] = config.model_copy(
        update={"key": new_key, "label": label, "commit": config.commit or "range", "ids": []}
    )
    assert state.bisection is not None
    for s in state.bisection.everything:
        if s.key == key:
            s.key = new_key


def _take(state: InvestigationState, end: RangeState) -> list[Launch]:
    """The launches of one end of the narrowed range, moved to its new reference (counted once
    in the noise)."""
    config = state.configs.pop(end.key)
    end.values = list(config.values)
    return list(config.launches)
