"""A bisection probe's verdict: good, bad, skipped, or another launch first.

Against the two references measured in calibration: at the good level (the first bad commit
is later), at the bad level or part of the way (it is this one or earlier), or unclear, when it
is launched again. A commit whose tree does not run is skipped as `git bisect run` skips on
exit 125. A step between the ends counts only where it adds min_share of the gap in the
metric's own units, and only against its good neighbour as the machine runs now.
"""

from __future__ import annotations

import math

from agent.levels import MAX_LAUNCHES_PER_CONFIG, between, noise, unresolved
from agent.shares import units_share
from agent.state import InvestigationState, RangeState
from agent.stats import BISECT_MIN_DF, SEARCH_ALPHA, level, p_equal

PART_WAY = "part of the way"
RECHECK = "recheck"  # a probe part of the way: its good neighbour is launched again first


def name(s: RangeState) -> str:
    return "the uncommitted changes" if s.sha is None else s.sha


def judge(state: InvestigationState, probe: RangeState) -> tuple[str, str]:
    """ "good", "bad", "skipped" or "more" (another launch), and why."""
    config = state.configs[probe.key]
    if config.failures and not config.values or unresolved(config):
        # a launch already starts a server twice: a commit whose tree failed is skipped, as
        # `git bisect run` skips on exit 125, and a neighbour tested instead
        failure = config.failures[-1]
        return "skipped", f"does not run ({failure.stage}: {failure.error})"
    if not config.values:
        return "more", "not measured"
    score = between(
        state, probe.key, state.bad_key, state.good_key, SEARCH_ALPHA, min_df=BISECT_MIN_DF
    )
    share = f"restores {score.r:.0%} of the gap"
    if probe.why == RECHECK:  # found part of the way: its neighbour was launched again since
        return part_way(state, probe, share)
    if score.verdict == "restored":
        return "good", f"at the good level ({share}, p = {score.p_vs_bad:.2g} against bad)"
    if score.verdict == "none":
        return "bad", f"at the bad level ({share}, p = {score.p_vs_good:.2g} against good)"
    between_ends = max(score.p_vs_good, score.p_vs_bad) <= SEARCH_ALPHA
    if score.verdict in ("partial", "unknown") and between_ends:
        units = units_share(state, probe.key)
        if units < state.min_share:  # a step that explains nothing of the symptom
            return "good", (
                f"between the ends on the log scale ({share}), but it adds at most {units:.1%} "
                f"of the gap in {state.metric}'s own units (three noise SDs above its "
                f"level), under the {state.min_share:.0%} a culprit must explain: on the good "
                "side, as git bisect's threshold puts it"
            )
    if score.verdict == "partial":
        return part_way(state, probe, share)
    if len(config.values) >= MAX_LAUNCHES_PER_CONFIG:
        return "skipped", f"cannot be told from either end after {len(config.values)} launches"
    return "more", f"unclear on {len(config.values)} launch(es): {share}"


def part_way(state: InvestigationState, probe: RangeState, share: str) -> tuple[str, str]:
    """A probe between the ends is "part of the way" only against its good neighbour as the
    machine runs now: a drift in load between the references and the probes reads as a partial
    step (werkzeug's 1 ms end read 1.4-2.2 ms beside two busy ranks). The neighbour is launched
    once after the probe (the probe's `why` says so meanwhile); a probe at its level then is
    good, whatever the references, which that launch joins, say."""
    b = state.bisection
    config = state.configs[probe.key]
    neighbour = b.states[b.low] if b is not None else None
    if neighbour is None or neighbour.key not in state.configs:
        return "bad", f"{PART_WAY} ({share}): part of the regression is in already"
    first = min(launch.request for launch in config.launches)
    now = [
        launch.value
        for launch in state.configs[neighbour.key].launches
        if launch.request > first and launch.disturbed is None
    ]
    if not now and probe.why != RECHECK:
        return RECHECK, neighbour.key
    if not now:  # its launch again was set aside: nothing better to go on
        return "bad", f"{PART_WAY} ({share}): part of the regression is in already"
    p = p_equal(level(config.values), len(config.values), level(now), len(now), noise(state))
    said = f"{name(neighbour)[:12]} (its good neighbour) measures {math.exp(level(now)):.3g} now"
    if p > SEARCH_ALPHA:
        return "good", (
            f"between the ends ({share}), but at the level its good neighbour measures as the "
            f"machine runs now ({said}, p = {p:.2g}): the load moved, not the code"
        )
    return "bad", f"{PART_WAY} ({share}; {said}, p = {p:.2g}): part of the regression is in"
