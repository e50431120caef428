"""Attribute: inside a set confirmed both ways, what causes it and what only comes along.

Links have a direction (tools/code_paths/dependencies.py): pip 19.3's connectionpool.py uses
names its new url.py defines, so reverting url.py needs connectionpool.py reverted too, but
applying url.py to the good state does not need connectionpool.py. The set that reverts cleanly
is one linked group of 12 hunks in four files; the cause may be a few of them. So, once one
linked group is confirmed (several groups are each tested for need already), smaller sets that
build when applied to the good state (a file's hunks, closed under what applying them needs)
are tried there, largest first. One that reproduces the regression is what the effect needs;
the others are "carried with" it (the revert needs them to build). A trial that falls short
rules out its subsets; one that does not run rules out nothing. At most MAX_TRIALS trials.
"""

from __future__ import annotations

from collections.abc import Callable

from agent.levels import between, ensure_config, unresolved
from agent.state import Confirmation, InvestigationState
from tools.code_paths.dependencies import file_change
from tools.repo.candidates import Candidate

MAX_TRIALS = 3

Verdict = Callable[[str], str]  # a config's key -> "restored" (at the bad level), ...


def apply_verdict(state: InvestigationState) -> Verdict:
    """A config's verdict as applied to good: "restored" where it reproduces the regression
    (at the bad level), "unresolved" where it does not run."""

    def verdict(key: str) -> str:
        if unresolved(state.configs[key]):
            return "unresolved"
        return between(state, key, state.good_key, state.bad_key).verdict

    return verdict


def apply_closure(state: InvestigationState, ids: set[str], within: set[str]) -> set[str]:
    """`ids` and what applying them to the good state needs (members of `within` only)."""
    grown = set(ids)
    while True:
        more = set()
        for link in state.links:
            if link.a not in within or link.b not in within:
                continue
            if link.when in ("apply", "both") and link.a in grown:
                more.add(link.b)
            if link.when in ("revert", "both") and link.b in grown:
                more.add(link.a)
        if more <= grown:
            return grown
        grown |= more


def outcomes(
    state: InvestigationState, conf: Confirmation, verdict: Verdict
) -> list[tuple[set[str], str]]:
    """Each trial so far with its outcome: restored, none, partial, unknown or unresolved."""
    out = []
    for trial in conf.trials:
        config = state.configs[ensure_config(state, set(trial)).key]
        out.append((set(trial), "unresolved" if unresolved(config) else verdict(config.key)))
    return out


def best_trial(
    state: InvestigationState, conf: Confirmation, causes: set[str], verdict: Verdict
) -> set[str]:
    """The smallest set that reproduces the regression applied to good: `causes` (the set's
    members that may be causes) until a trial does."""
    reproducing = [t for t, said in outcomes(state, conf, verdict) if said == "restored"]
    return min([t for t in reproducing if t < causes], key=len, default=causes)


def next_trial(
    state: InvestigationState, conf: Confirmation, causes: set[str], verdict: Verdict
) -> set[str] | None:
    """The next set to apply to good: a file's hunks with what applying them needs, a proper
    subset of the best so far, not inside one that fell short, not inert; the largest first
    (the likeliest to hold the cause); None: done."""
    if len(conf.groups) != 1 or len(conf.trials) >= MAX_TRIALS:
        return None
    best = best_trial(state, conf, causes, verdict)
    done = outcomes(state, conf, verdict)
    short = [t for t, said in done if said in ("none", "partial")]
    by_id = {c.id: c for c in state.candidates}
    options = []
    for path in sorted({by_id[cid].file or "" for cid in best}):
        trial = apply_closure(state, {cid for cid in best if by_id[cid].file == path}, best)
        if (
            trial < best
            and not all(_inert(state, by_id[cid]) for cid in trial)
            and all(trial != t for t, _ in done)
            and not any(trial <= s for s in short)
        ):
            options.append(trial)
    return max(options, key=lambda t: (len(t), sorted(t)), default=None)


def _inert(state: InvestigationState, c: Candidate) -> bool:
    """Applied to the good state alone, it cannot change what runs: a new file (nothing there
    imports it), or lines only added that only other members' new lines use."""
    if file_change(c) == "added":
        return True
    touching = [link for link in state.links if c.id in (link.a, link.b)]
    return c.removed == 0 and all(link.b == c.id and link.when == "apply" for link in touching)
