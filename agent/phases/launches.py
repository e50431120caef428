"""The references (bad and good), each launch's bookkeeping, and the references' drift:
re-measured every few search launches, and a note when one moves far from its earlier ones."""

from __future__ import annotations

from agent.levels import ensure_config, noise, request
from agent.state import InvestigationState, Launch, PlannedLaunch, Variant
from agent.stats import level
from tools.repo.candidates import CandidateSet
from tools.secrets import mask

DRIFT_EVERY = 5  # re-measure a reference every this many search launches
DRIFT_SIGMAS = 4  # a reference this many noise sigmas from its earlier launches has drifted


def references(state: InvestigationState, cands: CandidateSet) -> Variant:
    """Every candidate of the diff (masked: the runner keeps the real values), and the two
    references, bad (all of them) and good (none); the bad one, to launch first."""
    state.candidates = mask(cands).candidates
    state.good_sha = cands.good_sha
    state.bad_key = ensure_config(state, {c.id for c in state.candidates}).key
    state.good_key = ensure_config(state, set()).key
    return state.configs[state.bad_key]


def record(state: InvestigationState, config: Variant, launch: Launch) -> None:
    config.launches.append(launch)
    state.launches += 1


def record_experiment(state: InvestigationState, config: Variant, launch: Launch) -> str | None:
    """Record an experiment's launch; a line saying so when it shows a reference drifted."""
    before = list(config.values)
    record(state, config, launch)
    state.experiments += 1
    if config.key not in (state.bad_key, state.good_key):
        state.since_reference += 1
        return None
    state.since_reference = 0
    sigma = noise(state).sigma
    if before and abs(level([launch.value]) - level(before)) > DRIFT_SIGMAS * sigma:
        return (
            f"drift: {config.label} now measures "
            f"{launch.value:.3g}, its earlier launches {sum(before) / len(before):.3g} "
            f"(more than {DRIFT_SIGMAS} noise sigmas apart)"
        )
    return None


def drift_check(state: InvestigationState) -> PlannedLaunch | None:
    """A launch of the less measured reference, when the search has gone long without one."""
    if state.phase != "search" or state.since_reference < DRIFT_EVERY:
        return None
    bad, good = state.configs[state.bad_key], state.configs[state.good_key]
    key = state.bad_key if len(bad.values) <= len(good.values) else state.good_key
    return request(state, key, f"drift check: re-measure {state.configs[key].label}")
