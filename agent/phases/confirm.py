"""Confirm a culprit set two ways, on launches of its own, with measured noise.

`confirmed` needs: the bad state with exactly the set reverted restores the good value, the good
state with exactly the set applied reproduces the regression, and (for more than one member)
applying all but any one member to the good state does not reproduce all of it (each member is
needed).
Otherwise the search goes on (a missing partner, an unexplained share) or the set stays
`suspected`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from agent.levels import (
    MAX_LAUNCHES_PER_CONFIG,
    all_ids,
    between,
    ensure_config,
    noise_is_measured,
    replicate,
    request,
)
from agent.phases.search import names_used
from agent.state import Confirmation, InvestigationState, PlannedLaunch, Task

MAX_ROUNDS = 3


def start(state: InvestigationState) -> None:
    culprits = sorted({cid for finding in state.findings for cid in finding.ids})
    everything = all_ids(state)
    state.confirmation = Confirmation(
        culprits=culprits,
        revert_key=ensure_config(state, everything - set(culprits)).key,
        apply_key=ensure_config(state, set(culprits)).key,
        drop_keys={m: ensure_config(state, set(culprits) - {m}).key for m in culprits}
        if len(culprits) > 1
        else {},
        rounds=(state.confirmation.rounds + 1) if state.confirmation else 1,
    )


def advance(state: InvestigationState, log: Callable[..., None]) -> None:
    """The verdict (confirmed or suspected, to the report), or back to the search."""
    outcome = conclude(state)
    assert state.confirmation is not None
    names = ", ".join(state.confirmation.culprits)
    if outcome == "search":
        log("plan", "thought", state.notes[-1])
        state.phase = "search"
        return
    state.status = outcome  # "confirmed" or "suspected"
    log("plan", "verdict", f"{outcome}: {{{names}}}")
    state.phase = "report"


def _verdict(state: InvestigationState, key: str, apply_side: bool) -> str:
    if apply_side:  # reproduces the regression: sits at the bad end, measured from good
        return between(state, key, state.good_key, state.bad_key).verdict
    return between(state, key, state.bad_key, state.good_key).verdict


def _needs_launch(state: InvestigationState, key: str, apply_side: bool) -> bool:
    config = state.configs[key]
    if not config.values:
        return True
    return (
        _verdict(state, key, apply_side) == "unknown"
        and len(config.values) < MAX_LAUNCHES_PER_CONFIG
    )


def _launch(state: InvestigationState, key: str, why: str) -> PlannedLaunch:
    """A first launch of `key`, or a replicate (of it, or of a less-measured reference)."""
    return replicate(state, key, why) if state.configs[key].values else request(state, key, why)


def plan(state: InvestigationState, chooser: object = None) -> PlannedLaunch | None:
    conf = state.confirmation
    assert conf is not None
    revert, apply = state.configs[conf.revert_key], state.configs[conf.apply_key]
    names = ", ".join(conf.culprits)
    if _needs_launch(state, conf.revert_key, False):
        return _launch(state, conf.revert_key, f"confirm: revert exactly {{{names}}}")
    if _needs_launch(state, conf.apply_key, True):
        return _launch(state, conf.apply_key, f"confirm: apply exactly {{{names}}} to good")
    for ref_key, key, apply_side in (
        (state.bad_key, conf.apply_key, True),
        (state.good_key, conf.revert_key, False),
    ):
        ref = state.configs[ref_key]
        if len(ref.values) < 2 and _verdict(state, key, apply_side) == "partial":
            # a share of a gap whose end was measured once may be that launch's luck (a cold
            # first launch, an instrumented one): measure that end again before believing it
            return request(
                state,
                ref_key,
                f"confirm: replicate {ref.label}, measured once, "
                f"before taking {state.configs[key].label} as partial",
            )
    if not noise_is_measured(state):
        # replicates of the two counterfactuals (equal to the references) measure the noise
        key = conf.apply_key if len(apply.values) <= len(revert.values) else conf.revert_key
        return request(state, key, f"confirm: replicate {state.configs[key].label}")
    for member, key in conf.drop_keys.items():
        if _needs_launch(state, key, True):
            return _launch(state, key, f"confirm: is {member} needed? apply all the others to good")
    return None


def _needed(state: InvestigationState, without_key: str) -> bool:
    """A member is needed when the set without it no longer reproduces all the regression."""
    return between(state, without_key, state.good_key, state.bad_key).verdict != "restored"


def conclude(state: InvestigationState) -> Literal["confirmed", "suspected", "search"]:
    """After plan() has nothing left: 'confirmed', 'suspected', or 'search' (more to find)."""
    conf = state.confirmation
    assert conf is not None
    reverted = _verdict(state, conf.revert_key, False)
    applied = _verdict(state, conf.apply_key, True)
    kept = [
        cid
        for cid, h in state.hypotheses.items()
        if h.status == "open" and cid not in conf.culprits
    ]
    if reverted == "restored" and applied == "restored":
        unneeded = [m for m, key in conf.drop_keys.items() if not _needed(state, key)]
        if not unneeded:
            return "confirmed"
        for finding in state.findings:
            finding.ids = [cid for cid in finding.ids if cid not in unneeded]
        state.findings = [f for f in state.findings if f.ids]
        state.notes.append(
            f"{', '.join(unneeded)} not needed: the others alone reproduce "
            "the regression on the good state"
        )
        return "search" if conf.rounds < MAX_ROUNDS else "suspected"
    if conf.rounds >= MAX_ROUNDS:
        return "suspected"
    if reverted == "restored" and applied in ("none", "partial") and kept:
        _search_partner(state, conf, kept)
        return "search"
    dropped = [d.candidate for d in state.dropped if d.candidate not in conf.culprits]
    if reverted in ("partial", "none") and (kept or dropped):
        _search_the_rest(state, conf, kept, dropped)
        return "search"
    return "suspected"


def _search_partner(state: InvestigationState, conf: Confirmation, kept: list[str]) -> None:
    """Reverting the set is enough but it does not hurt alone: a partner is missing,
    likeliest among candidates that share a name with it (one sets what another reads)."""
    names = set().union(*(names_used(state, cid) for cid in conf.culprits))
    for cid in kept:
        if names & names_used(state, cid):
            state.hypotheses[cid].prior *= 10
            state.hypotheses[cid].reasons.append(
                f"shares {', '.join(sorted(names & names_used(state, cid)))} with the culprit found"
            )
    state.tasks = [Task(kind="partner", ids=kept, low_key=conf.apply_key, high_key=state.bad_key)]
    state.notes.append(
        f"{{{', '.join(conf.culprits)}}} alone does not reproduce the "
        "regression on the good state: searching for what it needs"
    )


def _search_the_rest(
    state: InvestigationState, conf: Confirmation, kept: list[str], dropped: list[str]
) -> None:
    """Reverting the set leaves part of the regression: search the rest, pruned ones too."""
    ids = kept + dropped
    for cid in dropped:
        state.hypotheses[cid].status = "open"
        state.hypotheses[cid].evidence.append(
            "brought back: the kept candidates do not explain the whole regression"
        )
    state.dropped = [d for d in state.dropped if d.candidate in conf.culprits]
    state.tasks = [
        Task(ids=ids, low_key=conf.revert_key, high_key=state.good_key, interference_checked=True)
    ]
    state.notes.append(
        "reverting the culprits found leaves part of the regression: "
        "searching the rest, pruned candidates included"
    )
