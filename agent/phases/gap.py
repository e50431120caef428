"""The gap itself, re-tested at the strict level on every launch of the references before a
set is confirmed (a search may have started on a level that fewer launches gave)."""

from __future__ import annotations

from agent.levels import noise, request
from agent.state import InvestigationState, PlannedLaunch
from agent.stats import ALPHA, calibrate

GAP_LAUNCHES = 10  # each reference's launches before the strict gap test may fail


def _gap(state: InvestigationState) -> tuple[bool, str]:
    """The gap re-tested on every launch of the references, at the strict level (calibration's
    rule for a regression); and why not."""
    bad, good = state.configs[state.bad_key].values, state.configs[state.good_key].values
    n = noise(state)
    result = calibrate(bad, good, n, state.worse, max_each=len(bad) + 1, margin=0.0, alpha=ALPHA)
    return result.status == "regression", (
        f"the gap ({result.gap:+.1%}) is not significant at {ALPHA:.0%} on all "
        f"{len(bad)} + {len(good)} launches of the references (p = {result.p:.2g}, "
        f"launch noise {n.sigma:.1%}): the regression is within this bench's noise"
    )


def gap_launch(state: InvestigationState) -> PlannedLaunch | None:
    """Another launch of the less-measured reference while the strict gap test fails and the
    references have had fewer than GAP_LAUNCHES each (the search's level started on less)."""
    bad, good = state.configs[state.bad_key], state.configs[state.good_key]
    if _gap(state)[0] or min(len(bad.values), len(good.values)) >= GAP_LAUNCHES:
        return None
    ref = bad if len(bad.values) <= len(good.values) else good
    return request(
        state, ref.key, f"confirm: the gap is not yet significant at 1 %; replicate {ref.label}"
    )


def gap_holds(state: InvestigationState) -> bool:
    """The strict gap test (a note when it does not hold)."""
    holds, why = _gap(state)
    if not holds:
        state.notes.append(why)
    return holds
