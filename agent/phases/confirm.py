"""Confirm a culprit set two ways, on launches of its own, with measured noise.

`confirmed` needs, each at the strict level (stats.ALPHA): the gap itself, re-tested on every
launch of the references; the bad state with exactly the set reverted restores the good value;
the good state with exactly the set applied reproduces the regression; and (for more than one
member) each member needed: applying all but it to the good state significantly falls short (or
does not run, for a member another one needs to build: a link read from the code).
A remainder that is significantly above zero after reverting the set sends the search on over
the other candidates (completeness) before the set is confirmed; it is reported either way.
Otherwise the search goes on (a missing partner, an unexplained share), or the set is
`suspected` (significant one way only), or nothing is named (`inconclusive`).
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
    unresolved,
)
from agent.phases.attribute import apply_verdict, best_trial, next_trial
from agent.phases.carried import carried_deletions, set_aside_carried
from agent.phases.gap import gap_holds, gap_launch
from agent.phases.inseparable import cannot_run, say_inseparable
from agent.phases.load_moved import moved_line, moved_verdict, recheck_launch
from agent.phases.needed import context_key, needed
from agent.phases.negligible import set_aside_negligible
from agent.phases.releases import wanted as releases_wanted
from agent.phases.remainder import (
    back_to,
    remainder_p,
    remainder_significant,
    search_partner,
    search_the_rest,
)
from agent.state import Confirmation, InvestigationState, Launch, PlannedLaunch
from agent.stats import ALPHA, SEARCH_ALPHA

MAX_ROUNDS = 3


def start(state: InvestigationState) -> None:
    """The set the search found, with what it needs to build (linked candidates move
    together: the closure under the links), tested two ways and, group by group, for need."""
    found = sorted({cid for finding in state.findings for cid in finding.ids})
    culprits = sorted(_closure(state, set(found)))
    if len(culprits) > len(found):
        state.notes.append(
            f"{', '.join(c for c in culprits if c not in found)} confirmed together with "
            f"{{{', '.join(found)}}}: linked in the code (they move together)"
        )
    groups = {group[0]: group for group in _link_groups(state, culprits)}
    everything = all_ids(state)
    state.confirmation = Confirmation(
        culprits=culprits,
        revert_key=ensure_config(state, everything - set(culprits)).key,
        apply_key=ensure_config(state, set(culprits)).key,
        drop_keys={
            first: ensure_config(state, set(culprits) - set(group)).key
            for first, group in groups.items()
        }
        if len(groups) > 1
        else {},
        groups=groups,
        rounds=(state.confirmation.rounds + 1) if state.confirmation else 1,
        rest_searched_for=state.confirmation.rest_searched_for if state.confirmation else [],
        confirmed_before=state.confirmation.confirmed_before if state.confirmation else [],
        negligible=state.confirmation.negligible if state.confirmation else {},
    )


def _closure(state: InvestigationState, ids: set[str]) -> set[str]:
    """`ids` and what links join to them, less what only travels along (never used by a
    traced launch: the trace outranks a link)."""
    carried = {cid for cid, h in state.hypotheses.items() if h.carried_with}
    grown = set(ids)
    while True:
        more = {
            other
            for link in state.links
            for one, other in ((link.a, link.b), (link.b, link.a))
            if one in grown and other not in grown and other not in carried
        }
        if not more:
            return grown
        grown |= more


def _link_groups(state: InvestigationState, ids: list[str]) -> list[list[str]]:
    """`ids` in groups that the links join (each sorted; a member needs its group to build)."""
    groups: list[set[str]] = []
    for cid in ids:
        joined = [g for g in groups if _closure(state, {cid}) & g]
        merged = set().union({cid}, *joined)
        groups = [g for g in groups if g not in joined] + [merged]
    return sorted(sorted(g) for g in groups)


def advance(state: InvestigationState, log: Callable[..., None]) -> None:
    """The verdict (confirmed or suspected, to the report), or back to the search."""
    assert state.confirmation is not None
    _say_moved(state, state.confirmation, log)
    outcome = conclude(state)
    names = ", ".join(state.confirmation.culprits)
    if outcome == "search":
        log("plan", "thought", state.notes[-1])
        state.phase = "search"
        return
    state.status = outcome  # "confirmed", "suspected" or "inconclusive"
    if outcome != "inconclusive":  # what comes along for the culprits is named apart
        set_aside_carried(state, state.confirmation, apply_verdict(state))
    if outcome == "inconclusive":
        log("plan", "verdict", f"inconclusive: {state.notes[-1] if state.notes else ''}")
    else:
        log("plan", "verdict", f"{outcome}: {{{names}}}")
    # a culprit package: its first slow release next
    state.phase = "releases" if releases_wanted(state) else "report"


def _against_references(state: InvestigationState, key: str, apply_side: bool) -> str:
    """restored / none / partial; "unresolved" when it cannot run, "unknown" while unclear."""
    if apply_side:  # reproduces the regression: sits at the bad end, measured from good
        return apply_verdict(state)(key)
    if unresolved(state.configs[key]):
        return "unresolved"
    return between(state, key, state.bad_key, state.good_key).verdict


def _verdict(state: InvestigationState, key: str, apply_side: bool) -> str:
    """As against the references, but part of the way only while its nearer end, launched
    since, still sits apart from it (load_moved.py); once that end was asked for, an unclear
    verdict too (its launch now widens the noise that the first partial verdict rested on)."""
    verdict = _against_references(state, key, apply_side)
    asked = state.confirmation is not None and key in state.confirmation.rechecked
    if verdict == "partial" or (verdict == "unknown" and asked):
        return moved_verdict(state, key, apply_side) or verdict
    return verdict


def _sides(conf: Confirmation) -> tuple[tuple[str, bool], tuple[str, bool]]:
    """The two ways, as (key, apply_side): the set reverted from bad, applied to good."""
    return (conf.revert_key, False), (conf.apply_key, True)


def _say_moved(state: InvestigationState, conf: Confirmation, log: Callable[..., None]) -> None:
    """Each way judged at its nearer end's level as the machine runs now, in the transcript."""
    for key, apply_side in _sides(conf):
        moved = _verdict(state, key, apply_side) != _against_references(state, key, apply_side)
        line = moved_line(state, key, apply_side) if moved else ""
        if line and line not in state.notes:  # said once, whatever the rounds after
            state.notes.append(line)
            log("judge", "verdict", line)


def _needs_launch(state: InvestigationState, key: str, apply_side: bool) -> bool:
    config = state.configs[key]
    if unresolved(config):
        return False
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
    revert = state.configs[conf.revert_key]
    names = ", ".join(conf.culprits)
    if (gap := gap_launch(state)) is not None:
        return gap
    if _needs_launch(state, conf.revert_key, False):
        return _launch(state, conf.revert_key, f"confirm: revert exactly {{{names}}}")
    if (trial := _attribution_launch(state, conf)) is not None:
        return trial  # the apply side first on the smaller sets that build (attribute.py)
    apply = state.configs[conf.apply_key]
    if _needs_launch(state, conf.apply_key, True):
        return _launch(state, conf.apply_key, f"confirm: apply exactly {{{names}}} to good")
    if (end := _end_measured_once(state, conf)) is not None:
        return end
    for key, apply_side in _sides(conf):
        partial = _verdict(state, key, apply_side) == "partial"
        if partial and (now := recheck_launch(state, key, apply_side, conf.rechecked)):
            return now
    if not noise_is_measured(state):
        # replicates of the two counterfactuals (equal to the references) measure the noise
        key = conf.apply_key if len(apply.values) <= len(revert.values) else conf.revert_key
        return request(state, key, f"confirm: replicate {state.configs[key].label}")
    for first, key in conf.drop_keys.items():
        without, group = state.configs[key], ", ".join(conf.groups[first])
        if unresolved(without):
            continue
        if not without.values:
            return _launch(state, key, f"confirm: is {group} needed? apply all the others to good")
        if needed(state, conf, first) is not None:
            continue
        # still undecided: its effect in the bad state's context too (the two contexts are
        # judged as one contrast), each measured as often as the other, up to the cap
        context = state.configs[context_key(state, conf, first)]
        more = [
            c
            for c in (without, context)
            if not unresolved(c) and len(c.values) < MAX_LAUNCHES_PER_CONFIG
        ]
        if more:
            pick = min(more, key=lambda c: len(c.values))
            where = "apply all the others to good" if pick is without else "revert the others"
            return _launch(state, pick.key, f"confirm: is {group} needed? {where}")
    p, launches = remainder_p(state, conf), len(revert.values)
    if p is None or p > SEARCH_ALPHA:
        return None
    question = f"confirm: a remainder after {{{names}}}? (p = {p:.2g} on {launches} launches)"
    good = state.configs[state.good_key]
    if len(good.values) <= launches and not _launched_lately(state, good.launches):
        # the remainder is a gap to the good reference as it runs now: a first bad commit's
        # parent, launched once by the bisection under another load, read 1.32 ms where its
        # tree runs at 1.7, and made werkzeug's last 0.4 ms a remainder worth six launches
        return request(state, state.good_key, f"{question} {good.label} again, as it runs now")
    if launches == 1 or (p > ALPHA and launches < MAX_LAUNCHES_PER_CONFIG):
        # completeness would search the other candidates on the strength of a launch or two
        # (a disturbed one, maybe): more launches decide, up to the strict level or the cap
        return replicate(state, conf.revert_key, question)
    return None


def _launched_lately(state: InvestigationState, launches: list[Launch]) -> bool:
    """One of `launches` is among the last two the investigation asked for."""
    return any(launch.request >= state.next_request - 2 for launch in launches)


def _end_measured_once(state: InvestigationState, conf: Confirmation) -> PlannedLaunch | None:
    """A share of a gap whose end was measured once may be that launch's luck (a cold first
    launch, an instrumented one): that end again before a partial verdict is believed."""
    for ref_key, key, apply_side in (
        (state.bad_key, conf.apply_key, True),
        (state.good_key, conf.revert_key, False),
    ):
        ref = state.configs[ref_key]
        if len(ref.values) < 2 and _verdict(state, key, apply_side) == "partial":
            return request(
                state,
                ref_key,
                f"confirm: replicate {ref.label}, measured once, "
                f"before taking {state.configs[key].label} as partial",
            )
    return None


def _attribution_launch(state: InvestigationState, conf: Confirmation) -> PlannedLaunch | None:
    """Once reverting the set restores: the apply side on the smaller sets that build applied
    to good (attribute.py), each until clear; the apply side of the confirmation is then the
    smallest that reproduces the regression (the whole set when none does)."""
    if _verdict(state, conf.revert_key, False) != "restored":
        return None
    verdict = apply_verdict(state)
    for tried in conf.trials:
        key = ensure_config(state, set(tried)).key
        if _needs_launch(state, key, True):
            return _launch(state, key, f"attribute: apply only {{{', '.join(tried)}}} to good")
    causes = {cid for cid in conf.culprits if cid not in carried_deletions(state, conf.culprits)}
    best = best_trial(state, conf, causes, verdict)
    if best != causes:
        conf.apply_key = ensure_config(state, best).key
    trial = next_trial(state, conf, causes, verdict)
    if trial is None:
        return None
    conf.trials.append(sorted(trial))
    key = ensure_config(state, trial).key
    names = ", ".join(sorted(trial))
    return _launch(state, key, f"attribute: apply only {{{names}}} to good (the rest comes along?)")


Outcome = Literal["confirmed", "suspected", "inconclusive", "search"]


def conclude(state: InvestigationState) -> Outcome:
    """After plan() has nothing left: the outcome, or 'search' (more to find)."""
    conf = state.confirmation
    assert conf is not None
    if not gap_holds(state):
        return "inconclusive"
    reverted = _verdict(state, conf.revert_key, False)
    applied = _verdict(state, conf.apply_key, True)
    kept = [
        cid
        for cid, h in state.hypotheses.items()
        if h.status == "open" and cid not in conf.culprits
    ]
    if reverted == "restored" and applied == "restored":
        return _both_ways(state, conf, kept)
    one_way = reverted == "restored" or applied == "restored"
    if conf.rounds >= MAX_ROUNDS:
        return _short(state, conf, one_way)
    if reverted == "restored" and applied in ("none", "partial") and kept:
        search_partner(state, conf, kept)
        return "search"
    dropped = [d.candidate for d in state.dropped if d.candidate not in conf.culprits]
    if reverted in ("partial", "none") and (kept or dropped):
        search_the_rest(state, conf, kept, dropped)
        return "search"
    return _short(state, conf, one_way)


def _short(state: InvestigationState, conf: Confirmation, one_way: bool) -> Outcome:
    """Not confirmed: the set an earlier round confirmed both ways, when the search for the
    remainder led nowhere firm; else suspected on significant evidence one way, else nothing
    is named."""
    if conf.confirmed_before and conf.culprits != conf.confirmed_before:
        state.notes.append(
            f"{{{', '.join(conf.culprits)}}} could not be confirmed: the remainder after "
            f"{{{', '.join(conf.confirmed_before)}}} stays unexplained"
        )
        back_to(state, conf, conf.confirmed_before)
        return "confirmed"
    if one_way:
        return "suspected"
    state.notes.append(
        f"{{{', '.join(conf.culprits)}}} could not be confirmed either way "
        "(reverting and applying it gave no significant result)"
    )
    return "inconclusive"


def _both_ways(state: InvestigationState, conf: Confirmation, kept: list[str]) -> Outcome:
    """Reverting restores and applying reproduces: each member needed, and nothing left?"""
    need_of = {first: needed(state, conf, first) for first in conf.drop_keys}
    unneeded = [m for first, need in need_of.items() if need is False for m in conf.groups[first]]
    if unneeded:
        for finding in state.findings:
            finding.ids = [cid for cid in finding.ids if cid not in unneeded]
        state.findings = [f for f in state.findings if f.ids]
        state.notes.append(
            f"{', '.join(unneeded)} not needed: the others alone reproduce "
            "the regression on the good state"
        )
        return "search"  # the set shrinks every time: no round limit needed here
    contexts = {first: context_key(state, conf, first) for first in need_of}
    if set_aside_negligible(state, conf, need_of, contexts):
        return "search"  # the set shrinks to what explains the gap
    inseparable = [
        first
        for first, need in need_of.items()
        if need is None and cannot_run(state.configs[conf.drop_keys[first]])
    ]
    say_inseparable(state, conf, inseparable)
    undecided = [
        m
        for first, need in need_of.items()
        if need is None and first not in inseparable
        for m in conf.groups[first]
    ]
    if undecided:  # neither shown needed nor shown unneeded: named apart, not as culprits
        conf.undecided = undecided
        conf.culprits = [m for m in conf.culprits if m not in undecided]
        state.notes.append(
            f"could not tell whether {', '.join(undecided)} is needed: without it the set "
            "falls short by a share the launches cannot tell from none (named as undecided)"
        )
        return "suspected" if conf.culprits else "inconclusive"
    searched = sorted(conf.culprits) == sorted(conf.rest_searched_for)
    if kept and not searched and conf.rounds < MAX_ROUNDS and remainder_significant(state, conf):
        # completeness: the other kept candidates (those dropped with evidence stay dropped:
        # the set found restores most of the gap, so nothing says that evidence was wrong)
        conf.rest_searched_for = conf.confirmed_before = list(conf.culprits)
        search_the_rest(state, conf, kept, [])
        return "search"
    return "confirmed"
