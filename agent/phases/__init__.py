"""The phases the plan node walks, in the method's order: calibrate, bisect, search, confirm,
and for a [stack]'s culprit package its releases.

Each phase is a module with the three functions of `Phase`: `plan` asks for one launch at a
time, `advance` (when it has nothing left to ask) gives its verdict and names the next phase
(or the report), and `start` sets up a phase entered from the one before it (a phase sent back
to, as confirmation sends the search, keeps what the sender set up). Adding a phase is adding a
module and its place in `PHASES`. Beside the phases: launches.py (the references, a launch's
bookkeeping, drift) and lines.py (the words of the graph's transcript lines).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from agent.phases import bisect, calibrate, confirm, releases, remainder, search
from agent.phases.search import Chooser
from agent.state import InvestigationState, PlannedLaunch

MAX_STEPS = 400  # our own limit on plan steps: LangGraph's recursion limit is far higher


class Phase(Protocol):
    def start(self, state: InvestigationState) -> None: ...

    def plan(self, state: InvestigationState, chooser: Chooser | None) -> PlannedLaunch | None: ...

    def advance(self, state: InvestigationState, log: Callable[..., None]) -> None: ...


PHASES: dict[str, Phase] = {
    "calibrate": calibrate,
    "bisect": bisect,
    "search": search,
    "confirm": confirm,
    "releases": releases,
}
_NEXT = dict(zip(PHASES, list(PHASES)[1:], strict=False))


def next_launch(
    state: InvestigationState, chooser: Chooser | None, log: Callable[..., None]
) -> PlannedLaunch | None:
    """The next launch the current phase asks for, going on through the phases that have
    nothing left to ask; None when the report is next (the budget may send it there first)."""
    while state.phase in PHASES:
        if budget_spent(state):
            stop_for_budget(state, log)
            break
        request = PHASES[state.phase].plan(state, chooser)
        if request is not None:
            return request
        left = state.phase
        PHASES[left].advance(state, log)
        if state.phase == _NEXT.get(left):
            PHASES[state.phase].start(state)
    return None


def budget_spent(state: InvestigationState) -> bool:
    return (
        state.launches >= state.max_launches
        or time.time() > state.deadline
        or state.steps > MAX_STEPS
    )


def stop_for_budget(state: InvestigationState, log: Callable[..., None]) -> None:
    if not state.status and remainder.keep_confirmed_on_budget(state):
        log("plan", "verdict", state.notes[-1])
    state.status = state.status or "budget_exhausted"
    log("plan", "thought", f"budget spent ({state.launches} launches): reporting what is known")
    state.stopped_in = state.phase  # a raised budget (chat) goes on from here
    state.phase = "report"
