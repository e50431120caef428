"""Calibrate: is there a regression, how large, and how noisy are launches?

Gathering facts launched each reference once (with the import trace). Replicates follow, bad and
good alternating, until the pooled launch noise is measured and the gap decided: a regression
(significant at the search's level: the report re-tests it at the strict one with every launch),
no regression (an equivalence test: the gap is significantly smaller than half the symptom's),
or inconclusive after MAX_REFERENCE_LAUNCHES each (the regression is within the bench's noise).
No decision rests on an assumed noise figure.

Why replicates of the references, and not the search's own configurations: tried (the first
probe and its mirror, a 2x2 design whose fitting grouping gives 2 df) it saved a launch a
scenario, but its noise assumes the probe restores all of the gap, and so hid an 86 % share:
three uneven additive pairs of 40 were confirmed with one cause. Completeness needs noise that
does not assume the answer.
"""

from __future__ import annotations

from collections.abc import Callable

from agent import decomposition, reproduction
from agent.gather import shadowed
from agent.levels import (
    noise,
    noise_is_measured,
    reference_unresolved,
    request,
    symptom_margin,
)
from agent.state import InvestigationState, PlannedLaunch
from agent.stats import BISECT_MIN_DF, MIN_NOISE_DF, calibrate

MAX_REFERENCE_LAUNCHES = 8


def start(state: InvestigationState) -> None:
    """The first phase: hypothesize hands over to it with nothing to set up."""


def plan(state: InvestigationState, chooser: object = None) -> PlannedLaunch | None:
    bad, good = state.configs[state.bad_key], state.configs[state.good_key]
    if decide(state) != "unknown":
        return None
    if not good.values:
        return request(state, state.good_key, "calibrate: measure the good reference")
    if not bad.values:
        return request(state, state.bad_key, "calibrate: measure the bad reference")
    key = state.bad_key if len(bad.values) <= len(good.values) else state.good_key
    why = (
        "the gap is not clear yet" if noise_is_measured(state) else "launch noise not measured yet"
    )
    return request(state, key, f"calibrate: {why}; another launch of {state.configs[key].label}")


def advance(state: InvestigationState, log: Callable[..., None]) -> None:
    """The verdict: a regression (to the search), or the report with why not. Before either,
    the references are set beside the symptom's numbers (reproduce before searching)."""
    verdict = decide(state)
    log("plan", "verdict", f"calibration: {verdict}: {state.notes[-1] if state.notes else ''}")
    if verdict != "error" and state.reproduction is None:  # the range's ends, not a commit's
        state.reproduction = reproduction.check(state)
    if state.reproduction is not None:
        log("plan", "thought", reproduction.describe(state.reproduction))
        # no regression where the symptom claims one, or one far smaller than it claims
        why = None
        if _claims_regression(state) and verdict == "no_regression":
            why = reproduction.advice(state.reproduction)
        elif _claims_regression(state) and verdict == "regression":
            why = reproduction.small_part(state.reproduction)
        if why is not None:
            verdict = "not_reproduced"
            _note(state, why)
            log("plan", "verdict", f"not reproduced: {why}")
    if verdict == "regression":
        _search_the_part_that_moved(state, log)
        state.phase = "bisect"
        return
    for line in shadowed(state.facts):  # the likeliest reason the change did not show
        _note(state, line)
        log("plan", "thought", line)
    state.status = "error" if verdict == "error" else verdict  # type: ignore[assignment]
    state.phase = "report"


def _search_the_part_that_moved(state: InvestigationState, log: Callable[..., None]) -> None:
    """A speculative server's throughput regression is slower cycles or fewer accepted tokens:
    when one moved alone, the search measures that one."""
    if state.metric != decomposition.THROUGHPUT:
        return
    parts = decomposition.decompose(state)
    if parts is None:
        return
    metric = decomposition.moved_alone(parts) or state.metric
    _note(state, decomposition.describe(parts, metric))
    log("plan", "thought", state.notes[-1])
    if metric != state.metric:
        decomposition.switch_metric(state, metric)


def _claims_regression(state: InvestigationState) -> bool:
    """The symptom gives a value and a worse one ("verify 29ms (was 19)")."""
    bad, was = state.symptom.bad, state.symptom.good
    if not was:
        return False
    return bad > was if state.worse == "higher" else bad < was


def decide(state: InvestigationState) -> str:
    """ "regression", "no_regression", "inconclusive", "error" (a reference cannot run) or
    "unknown" (and a note saying why)."""
    bad, good = state.configs[state.bad_key], state.configs[state.good_key]
    for config in (bad, good):
        if reference_unresolved(state, config):
            failure = config.failures[-1]
            _note(
                state,
                f"the {config.label} reference cannot run ({failure.stage}: {failure.error}): "
                "nothing can be compared with it",
            )
            return "error"
    b = state.bisection  # a bisection ahead starts on one degree of freedom (agent.stats)
    min_df = BISECT_MIN_DF if b is not None and not b.done else MIN_NOISE_DF
    if not noise_is_measured(state, min_df) or not bad.values or not good.values:
        return "unknown"
    result = calibrate(
        bad.values,
        good.values,
        noise(state),
        state.worse,
        MAX_REFERENCE_LAUNCHES,
        symptom_margin(state),
        min_df=min_df,
    )
    if result.status != "unknown":
        _note(state, result.reason)
    return result.status


def _note(state: InvestigationState, text: str) -> None:
    if not state.notes or state.notes[-1] != text:
        state.notes.append(text)
