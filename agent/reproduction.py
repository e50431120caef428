"""Reproduce before searching: does the bench see the regression the symptom describes?

A search is only as good as the workload it measures. One published bisect measured another
cell (concurrency, dataset, prompt count) than the one that regressed and reported "no
regression" while the regression was live; another held an "old" control that was already
regressed. When the symptom gives numbers ("verify 29ms (was 19)"), the references measured in
calibration are set beside them: a bad state far from the symptom's value, or a good one far
from its "was", is said with both numbers and the workload; a good reference at the symptom's
bad level is "already regressed"; and no regression where the symptom claims one is
`not_reproduced`, with what to change in [bench]. So is a gap far smaller than the one
described ("75 ms (was 10)", and the bench measures 10.8 against 10.1): a significant step of a
few percent beside a claimed 7x is another effect (a drift of the machine's load between the
launches, most often), not the regression the user asked about; the note gives its numbers.
"""

from __future__ import annotations

import math

from agent.levels import level
from agent.result import ReproductionResult as Reproduction
from agent.state import InvestigationState

FAR = math.log(1.25)  # measured this far from the symptom's number (either way): say so
SMALL_PART = 0.15  # a measured gap under this part of the described one (log scale): not it


def _near_bad(value: float, symptom_bad: float, symptom_good: float) -> bool:
    """Closer to the symptom's bad value than to its "was" (on a log scale)."""
    return abs(math.log(value / symptom_bad)) < abs(math.log(value / symptom_good))


def check(state: InvestigationState) -> Reproduction | None:
    """None where the symptom gives no number in the metric measured or a reference has no
    value yet."""
    symptom = state.symptom
    bad, good = state.configs[state.bad_key].values, state.configs[state.good_key].values
    if not bad or not good or symptom.bad <= 0 or not _same_metric(state):
        return None
    measured_bad, measured_good = math.exp(level(bad)), math.exp(level(good))
    unit = f" {symptom.unit}" if symptom.unit else ""
    far = []
    if abs(math.log(measured_bad / symptom.bad)) > FAR:
        far.append(f"bad measures {measured_bad:.3g}{unit}, the symptom says {symptom.bad:g}")
    regressed = False
    if symptom.good and symptom.good > 0:
        if abs(math.log(measured_good / symptom.good)) > FAR:
            far.append(
                f"good measures {measured_good:.3g}{unit}, the symptom says {symptom.good:g}"
            )
        regressed = symptom.bad != symptom.good and _near_bad(
            measured_good, symptom.bad, symptom.good
        )
    return Reproduction(
        bad=measured_bad,
        good=measured_good,
        symptom_bad=symptom.bad,
        symptom_good=symptom.good,
        workload=state.workload,
        far=far,
        good_already_regressed=regressed,
        passed=not far and not regressed,
    )


def _same_metric(state: InvestigationState) -> bool:
    """The symptom's numbers are in the metric the bench measures (a command bench's own
    metric takes any symptom's numbers: they were matched when the session started)."""
    return not state.symptom.metric or state.symptom.metric == state.metric


def describe(r: Reproduction) -> str:
    """One transcript line."""
    if r.passed:
        return (
            f"reproduction check passed: bad {r.bad:.3g} and good {r.good:.3g} as measured, "
            f"beside the symptom's {r.symptom_bad:g}"
            + (f" (was {r.symptom_good:g})" if r.symptom_good else "")
            + f" ({r.workload})"
        )
    parts = list(r.far)
    if r.good_already_regressed:
        parts.append(
            f"the good reference is already regressed: it measures {r.good:.3g}, at the "
            f"symptom's bad level ({r.symptom_bad:g}) rather than its {r.symptom_good:g}"
        )
    if not r.good_already_regressed and r.bad != r.good:
        return (
            f"the regression is here at other numbers: {'; '.join(parts)} (another machine or "
            f"load?) ({r.workload})"
        )
    return f"the bench does not measure what the symptom describes: {'; '.join(parts)} " + (
        f"({r.workload})"
    )


def small_part(r: Reproduction) -> str | None:
    """Why the gap measured is not the regression the symptom describes: under SMALL_PART of
    its size on a log scale, with the bad reference measured at the symptom's "was" (within
    FAR of it; None: it may be, or the symptom gives no "was")."""
    if not r.symptom_good or r.symptom_good <= 0 or r.symptom_bad == r.symptom_good:
        return None
    described = abs(math.log(r.symptom_bad / r.symptom_good))
    measured = abs(math.log(r.bad / r.good)) if r.good > 0 and r.bad > 0 else math.inf
    near_was = abs(math.log(r.bad / r.symptom_good)) <= FAR if r.bad > 0 else False
    if measured >= SMALL_PART * described or not near_was:
        return None  # a step this size, or a bench at other numbers: it may be the one
    return (
        f"the gap measured (bad {r.bad:.3g} against good {r.good:.3g}, {r.bad / r.good - 1:+.0%}) "
        f"is under {SMALL_PART:.0%} of the one described ({r.symptom_bad:g}, was "
        f"{r.symptom_good:g}, on a log scale), and the bad reference measures near the 'was': "
        "not the regression the symptom describes (a drift of the machine's load between "
        "launches can make such a step); to search this gap itself, give a symptom at these "
        "numbers"
    )


def advice(r: Reproduction) -> str:
    """What to change in [bench] when the regression was not reproduced."""
    if r.good_already_regressed:
        return (
            "the good reference measures at the bad level: check [target] good (the ref may "
            "already hold the regression) and [launch.good] (the good state's command and env)"
        )
    return (
        f"the bench measured no regression where the symptom reports {r.symptom_bad:g}"
        + (f" (was {r.symptom_good:g})" if r.symptom_good else "")
        + f" ({r.workload}): make [bench] measure the workload where the regression was seen "
        "(concurrency, input_len and output_len, requests, the dataset or the command), "
        "then investigate again"
    )
