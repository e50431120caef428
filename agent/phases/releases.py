"""Releases: once a package of a [stack] is confirmed a culprit, its first slow release.

The releases between the package's good and bad versions (listed with the candidates, from the
wheel folder or the index) are searched as a bisection searches commits, with the same probe
choice (agent/phases/bisect.py: each probe the most informative; a release whose environment
cannot be built is skipped): a probe is the bad state with only that package at that release.
It is judged between the bad reference and the bad state with the package reverted (measured by
the confirmation), so that another culprit beside it does not read as part of its gap. The
result, kept as a Bisection whose states stand for releases (a version where a commit's sha
stands): the first slow release, the one before it measured good (or the good version itself).
"""

from __future__ import annotations

from collections.abc import Callable

from agent.levels import MAX_LAUNCHES_PER_CONFIG, all_ids, between, replicate, request, unresolved
from agent.phases.probe_choice import next_probe
from agent.phases.probe_verdict import PART_WAY
from agent.release_verdict import result_lines
from agent.state import (
    Bisection,
    InvestigationState,
    PlannedLaunch,
    RangeState,
    Variant,
    config_key,
)
from agent.stats import BISECT_MIN_DF, SEARCH_ALPHA

RELEASE_KEY = "release-"


def wanted(state: InvestigationState) -> bool:
    """A confirmed package culprit whose releases between its two versions are known (none:
    the bad version is the next release, and the first slow one), not searched yet."""
    return state.releases is None and _culprit(state) is not None


def _culprit(state: InvestigationState) -> str | None:
    if state.status != "confirmed" or state.confirmation is None:
        return None
    for cid in state.confirmation.culprits:
        c = next((c for c in state.candidates if c.id == cid), None)
        if c is not None and c.kind == "package" and c.releases is not None:
            return cid
    return None


def start(state: InvestigationState) -> None:
    """The releases laid out: the package reverted (good end), each release, the bad end."""
    cid = _culprit(state)
    if cid is None or state.releases is not None:
        return
    c = state.candidate(cid)
    assert c.name and c.good and c.bad and c.releases is not None
    reverted = config_key(all_ids(state) - {cid})
    states = [RangeState(sha=c.good, subject=f"{c.name} {c.good}", key=reverted, verdict="good")]
    for version in c.releases:
        key = f"{RELEASE_KEY}{c.name}-{version}"
        label = f"bad with {c.name} {version}"
        state.configs.setdefault(
            key, Variant(key=key, label=label, base="bad", ids=[], pins={c.name: version})
        )
        states.append(RangeState(sha=version, subject=f"{c.name} {version}", key=key))
    states.append(
        RangeState(sha=c.bad, subject=f"{c.name} {c.bad}", key=state.bad_key, verdict="bad")
    )
    state.releases = Bisection(
        states=states, low=0, high=len(states) - 1, range_good_sha=c.good, package=c.name
    )


def plan(state: InvestigationState, chooser: object = None) -> PlannedLaunch | None:
    b = state.releases
    if b is None or b.done:
        return None
    while (probe := next_probe(b)) is not None:
        here = b.states[probe]
        verdict, why = _judge(state, here.key, b.states[0].key)
        if verdict == "more":
            config = state.configs[here.key]
            if not config.values:
                return request(state, here.key, f"releases: {here.subject}, alone in the bad state")
            return replicate(state, here.key, f"releases: {here.subject} again ({why})")
        here.verdict, here.why = verdict, why  # type: ignore[assignment]
        here.values = list(state.configs[here.key].values)
        if verdict == "good":
            b.low = probe
        elif verdict == "bad":
            b.high = probe
    b.done = True
    return None


def _judge(state: InvestigationState, key: str, reverted: str) -> tuple[str, str]:
    """good / bad / skipped / more, against the bad state and the package reverted."""
    config = state.configs[key]
    if config.failures and not config.values or unresolved(config):
        failure = config.failures[-1]
        return "skipped", f"its environment does not run ({failure.stage}: {failure.error})"
    if not config.values:
        return "more", "not measured"
    score = between(state, key, state.bad_key, reverted, SEARCH_ALPHA, min_df=BISECT_MIN_DF)
    share = f"restores {score.r:.0%} of the package's gap"
    if score.verdict == "restored":
        return "good", f"at the level of the package reverted ({share})"
    if score.verdict == "none":
        return "bad", f"at the bad level ({share})"
    if score.verdict == "partial":
        return "bad", f"{PART_WAY} ({share}): part of the slowdown is in already"
    if len(config.values) >= MAX_LAUNCHES_PER_CONFIG:
        return "skipped", f"cannot be told from either end after {len(config.values)} launches"
    return "more", f"unclear on {len(config.values)} launch(es): {share}"


def advance(state: InvestigationState, log: Callable[..., None]) -> None:
    """The first slow release, then its hunks (hypothesize again: agent/narrow_release.py);
    straight to the report where skipped releases leave it open, or where other culprits
    stand beside the package (the search inside the release would put them out of the
    report: their shares are the answer there)."""
    b = state.releases
    state.phase = "report"
    if b is not None and b.done:
        for line in result_lines(b):
            log("plan", "verdict", line)
        state.notes.append(result_lines(b)[0])
        alone = state.confirmation is not None and len(state.confirmation.culprits) == 1
        if not b.skipped_between() and alone:
            state.phase = "hypothesize"
        elif not alone:
            state.notes.append("other culprits stand beside the package: not searched inside")
            log("plan", "thought", state.notes[-1])
