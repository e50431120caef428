"""A bisection probe's verdict: good, bad, skipped, or another launch first.

Against the two references measured in calibration: at the good level (the first bad commit
is later), at the bad level or part of the way (it is this one or earlier), or unclear, when it
is launched again. A commit whose tree does not run is skipped as `git bisect run` skips on
exit 125. A step between the ends counts only where it adds min_share of the gap in the
metric's own units, and only against its good neighbour as the machine runs now. A probe
launched more than once whose best launch runs at its good neighbour's level is good, whatever
its mean says: a machine slows whole processes and never runs code faster than it is
(werkzeug's 2.2 ms tree read 31 in one process slowed 8x, and its mean sat at the bad level).
"""

from __future__ import annotations

import math

from agent.levels import MAX_LAUNCHES_PER_CONFIG, between, noise, unresolved
from agent.phases.load_moved import launched_since
from agent.shares import units_share
from agent.state import InvestigationState, RangeState
from agent.stats import BISECT_MIN_DF, SEARCH_ALPHA, level, p_equal, pooled_noise

PART_WAY = "part of the way"
RECHECK = "recheck"  # a probe part of the way: its nearer neighbour is launched again first
STEP_LAUNCHES = 3  # a probe's launches before a step part of the way is believed


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
    if probe.recheck:  # part of the way: a neighbour launched again
        return part_way(state, probe, share, score.r)
    if score.verdict == "restored":
        return "good", f"at the good level ({share}, p = {score.p_vs_bad:.2g} against bad)"
    good_key = state.bisection.states[state.bisection.low].key if state.bisection else ""
    if len(config.values) > 1 and (slowed := _slowed(state, probe.key, good_key, None)):
        return "good", f"{share} on the mean of its launches, but {slowed}"
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
        return part_way(state, probe, share, score.r)
    if len(config.values) >= MAX_LAUNCHES_PER_CONFIG:
        return "skipped", f"cannot be told from either end after {len(config.values)} launches"
    return "more", f"unclear on {len(config.values)} launch(es): {share}"


def part_way(state: InvestigationState, probe: RangeState, share: str, r: float) -> tuple[str, str]:
    """A probe between the ends is "part of the way" only against its nearer neighbour as the
    machine runs now: a drift in load between the references and the probes reads as a partial
    step (werkzeug's 1 ms end read 1.4-2.2 ms beside two busy ranks; markdown2's bad end read
    157 ms in a loaded CI run, where its tree runs at 85, and its first bad commit looked part
    of the way). The nearer neighbour (on the log scale) is launched once after the probe (the
    probe's `recheck` names it meanwhile); a probe at its level then sits at that end, whatever the
    references, which that launch joins, say. A probe apart from it is launched to STEP_LAUNCHES,
    and its step believed only where its best launch shows it too (`_slowed`): one slowed
    process of a good tree read as a step and sent werkzeug's 239 commits to the hunk search."""
    b = state.bisection
    config = state.configs[probe.key]
    if b is None:
        return "bad", f"{PART_WAY} ({share}): part of the regression is in already"
    asked = bool(probe.recheck)
    key = probe.recheck or b.states[b.low if r >= 0.5 else b.high].key
    if key not in state.configs:
        return "bad", f"{PART_WAY} ({share}): part of the regression is in already"
    good_side = key == b.states[b.low].key
    now = launched_since(state, config, key)
    if not now and not asked:
        return RECHECK, key
    if not now:  # its launch again was set aside: nothing better to go on
        return "bad", f"{PART_WAY} ({share}): part of the regression is in already"
    p = p_equal(level(config.values), len(config.values), level(now), len(now), noise(state))
    side = "good" if good_side else "bad"
    said = (
        f"its {side} neighbour, {state.configs[key].label}, measures {math.exp(level(now)):.3g} now"
    )
    if p > SEARCH_ALPHA:
        return side, (
            f"between the ends ({share}), but at the level {said} (p = {p:.2g}): the load "
            "moved, not the code"
        )
    if len(config.values) < STEP_LAUNCHES and len(config.launches) < MAX_LAUNCHES_PER_CONFIG:
        return "more", f"{PART_WAY} ({share}; {said}) on {len(config.values)} launch(es)"
    if slowed := _slowed(state, probe.key, b.states[b.low].key, now if good_side else None):
        return "good", f"between the ends ({share}), but {slowed}"
    return "bad", f"{PART_WAY} ({share}; {said}, p = {p:.2g}): part of the regression is in"


def _slowed(state: InvestigationState, key: str, good_key: str, now: list[float] | None) -> str:
    """Why `key`, a probe, is its good neighbour slowed (empty: it is not): its best launch
    runs at that neighbour's level (`now`: as launched since the probe), held to the noise of
    every other configuration (the probe's own spread is what is in question). A machine only
    ever makes a launch worse, a whole process at a time (one in five ran markdown2's tree at
    21 ms where the others ran it at 12), so a step its best launch does not show is no step;
    the launches apart from that level are set aside as slowed, so that neither the probe's
    level nor the noise carries them on."""
    config = state.configs.get(good_key) or state.configs[state.good_key]
    levels = now or config.values
    probe = state.configs[key]
    if not levels or not probe.values:  # a merge base, good by ancestry, never launched
        return ""
    clean = pooled_noise([c.values for k, c in state.configs.items() if k != key])
    if clean.df < BISECT_MIN_DF:  # nothing to tell a slowed launch by
        return ""
    best = min(probe.values) if state.worse == "higher" else max(probe.values)
    good, bad = level(levels), level(state.configs[state.bad_key].values)
    p = p_equal(level([best]), 1, good, len(levels), clean, BISECT_MIN_DF)
    n_bad = len(state.configs[state.bad_key].values)
    p_bad = p_equal(level([best]), 1, bad, n_bad, clean, BISECT_MIN_DF)
    worse = (level([best]) > good) == (state.worse == "higher")
    nearer = abs(level([best]) - good) < abs(level([best]) - bad)
    # at the good level, nearer it than the bad one, and positively apart from the bad one: a
    # noise the slowed launches of other probes widen proves nothing either way
    if (worse and p <= SEARCH_ALPHA) or not nearer or p_bad > SEARCH_ALPHA:
        return ""
    at = f"{config.label}'s level ({math.exp(good):.3g}; p = {p:.2g})"
    for launch in probe.launches:
        if launch.disturbed is None and launch.value != best:
            apart = p_equal(level([launch.value]), 1, good, len(levels), clean, BISECT_MIN_DF)
            if apart <= SEARCH_ALPHA:
                launch.disturbed = f"slowed: {launch.value:.3g}, where its best launch runs at {at}"
    return (
        f"its best launch ({best:.3g}) runs at the level of its good neighbour, {at}: the other "
        "launches were slowed, not the code"
    )
