"""Configurations by content, and how each measured one sits between the bad and good references."""

from __future__ import annotations

import math

from agent.state import Base, InvestigationState, PlannedLaunch, Variant, config_key
from agent.stats import (
    ALPHA,
    BISECT_MIN_DF,
    MIN_NOISE_DF,
    MIN_RELATIVE_GAP,
    SEARCH_ALPHA,
    Noise,
    Score,
    Verdict,
    level,
    pooled_noise,
    score,
)

MAX_LAUNCHES_PER_CONFIG = 4
DEFAULT_MARGIN = 0.2  # "no regression" means under 20 % when the symptom implies no gap
# a config judged restored stands with the good reference; one judged unchanged with the bad
_LEVEL_OF: dict[Verdict, Base] = {"restored": "good", "none": "bad"}


def all_ids(state: InvestigationState) -> set[str]:
    return {c.id for c in state.candidates}


def members(ids: list[str], shown: int = 4) -> str:
    """`{a, b, c, d, +96 more}`: a set named in a line people read (ids are kept whole)."""
    more = f", +{len(ids) - shown} more" if len(ids) > shown + 1 else ""
    return "{" + ", ".join(ids[:shown] if more else ids) + more + "}"


def ensure_config(state: InvestigationState, held: set[str]) -> Variant:
    """The config holding exactly `held` (the bad-side candidates present), made if new."""
    key = config_key(held)
    if key not in state.configs:
        everything = all_ids(state)
        reverted, applied = sorted(everything - held), sorted(held)
        label: str
        base: Base
        ids: list[str]
        if held == everything:
            label, base, ids = "bad", "bad", []
        elif not held:
            label, base, ids = "good", "good", []
        elif len(reverted) <= len(applied):
            label, base, ids = f"bad - {members(reverted)}", "bad", reverted
        else:
            label, base, ids = f"good + {members(applied)}", "good", applied
        state.configs[key] = Variant(key=key, label=label, base=base, ids=ids)
    return state.configs[key]


def held(state: InvestigationState, key: str) -> set[str]:
    config = state.configs[key]
    if config.base == "bad":
        return all_ids(state) - set(config.ids)
    return set(config.ids)


def request(state: InvestigationState, key: str, why: str) -> PlannedLaunch:
    req = PlannedLaunch(id=state.next_request, key=key, why=why)
    state.next_request += 1
    return req


def noise(state: InvestigationState) -> Noise:
    """Pooled over launches of each config and of configs judged equal to a reference."""
    bad, good = state.configs[state.bad_key], state.configs[state.good_key]
    groups = {"bad": list(bad.values), "good": list(good.values)}
    others = []
    for config in state.configs.values():
        if config.key in (state.bad_key, state.good_key):
            continue
        if config.level in groups:
            groups[config.level] += config.values
        else:
            others.append(config.values)
    return pooled_noise([*groups.values(), *others])


def noise_is_measured(state: InvestigationState, min_df: int = MIN_NOISE_DF) -> bool:
    return noise(state).df >= min_df


START_TRIES = 3  # failed launches (each two starts) of a state known to run, when all were starts


def unresolved(config: Variant, runs: bool = False) -> bool:
    """A config that cannot be measured: its tree did not build or its bench failed, or its
    server did not start twice (each a start and its retry: flaky starts exist), or, once it
    has measured something, any two failures. A state known to run (it has measured, or, for
    a reference, `runs`: other launches of the session started) whose failures were all
    start-ups is flaky, not broken: it gets START_TRIES."""
    if not config.failures:
        return False
    starts_only = all(f.stage == "start" for f in config.failures)
    if starts_only and (runs or config.values):
        return len(config.failures) >= START_TRIES
    if config.values:
        return len(config.failures) >= 2
    return not starts_only or len(config.failures) >= 2


def reference_unresolved(state: InvestigationState, config: Variant) -> bool:
    """`unresolved` for a reference, on which everything hinges: while launches of this
    session start, one that only failed to start gets START_TRIES (at one start in three
    failing, 1 in 700 fail them all)."""
    return unresolved(config, runs=any(c.values for c in state.configs.values()))


def between(
    state: InvestigationState,
    key: str,
    low_key: str,
    high_key: str,
    alpha: float = ALPHA,
    measured: Noise | None = None,
    min_df: int = MIN_NOISE_DF,
) -> Score:
    """Where `key` sits between `low_key` (r = 0) and `high_key` (r = 1); with the launch
    noise `measured` elsewhere (a re-run holds its launches against the session it re-runs)."""
    c, low, high = state.configs[key], state.configs[low_key], state.configs[high_key]
    n = measured or noise(state)
    return score(c.values, low.values, high.values, n, alpha=alpha, min_df=min_df)


def symptom_margin(state: InvestigationState) -> float:
    """The log gap under which there is "no regression": half the gap the symptom implies
    (its value against its "was", or else against the good reference as measured), at least
    MIN_RELATIVE_GAP; DEFAULT_MARGIN when the symptom implies no gap in the worse direction."""
    sign = 1 if state.worse == "higher" else -1
    if state.symptom.metric and state.symptom.metric != state.metric:
        return math.log1p(DEFAULT_MARGIN)  # the search switched to a part of the symptom's
    good = state.configs[state.good_key].values
    was = state.symptom.good or (math.exp(level(good)) if good else None)
    if not was or was <= 0 or state.symptom.bad <= 0:
        return math.log1p(DEFAULT_MARGIN)
    implied = sign * math.log(state.symptom.bad / was)
    if implied <= 0:
        return math.log1p(DEFAULT_MARGIN)
    return max(implied / 2, math.log1p(MIN_RELATIVE_GAP))


def replicate(state: InvestigationState, key: str, why: str) -> PlannedLaunch:
    """Another launch for an unclear `key`, or first for a reference measured less often.

    An unclear verdict is as much about the two ends as about `key`: a reference measured once
    (a cold first launch, say) keeps every comparison against it unclear however often `key`
    is repeated, so the ends are kept at least as replicated as what is compared with them.
    """
    refs = sorted((state.bad_key, state.good_key), key=lambda k: len(state.configs[k].values))
    ref = state.configs[refs[0]]
    if len(ref.values) < len(state.configs[key].values):
        return request(
            state,
            ref.key,
            f"replicate {ref.label} (measured {len(ref.values)}x) "
            f"before judging {state.configs[key].label} again",
        )
    return request(state, key, why)


POOL_P = 0.2  # a config pools with a reference only when it cannot be told apart from it


def update_levels(state: InvestigationState) -> None:
    """Judge each measured config against the references, for pooling the noise: at a
    reference's level (restored, or none) and indistinguishable from it. A config that restores
    most of the gap but not all (a second, smaller cause) would otherwise widen the noise by
    exactly the share that completeness looks for."""
    # on a commit range, one degree of freedom may pool a probe that is beyond doubt at the
    # strict level (agent.stats: a bisection starts on one), or one apart from the other end
    # at the search's level that sits within min_share of its own: closer than any share the
    # search would report (a 65x gap on 3 % noise; at 15 % noise, one launch is never that close)
    ranged = state.bisection is not None
    min_df = BISECT_MIN_DF if ranged else MIN_NOISE_DF
    references = (state.configs.get(state.bad_key), state.configs.get(state.good_key))
    if any(r is None or not r.values for r in references):
        return  # a reference not measured yet (a parent good by ancestry): judged once it is
    for config in state.configs.values():
        if config.key in (state.bad_key, state.good_key) or not config.values:
            continue
        score = between(state, config.key, state.bad_key, state.good_key, min_df=min_df)
        level = _LEVEL_OF.get(score.verdict)
        if level is None and ranged:
            near = between(
                state, config.key, state.bad_key, state.good_key, SEARCH_ALPHA, min_df=min_df
            )
            if min(abs(near.r), abs(1 - near.r)) <= state.min_share:
                level = _LEVEL_OF.get(near.verdict)
                score = near
        apart = score.p_vs_good if level == "good" else score.p_vs_bad
        config.level = level if level and apart > POOL_P else None
