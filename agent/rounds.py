"""A round: up to K launches that are useful together, for K experiment slots.

The method asks for one launch at a time, each chosen on what the last one said. With K slots
a round takes that launch and fills the others with the launches the method would ask for next,
most likely needed first. A state not measured yet has two outcomes: it measures like the bad
reference or like the good one (a bisection step's two answers); a state measured before, its
own level. Each outcome's chance is the share of the suspects' weight it holds: the priors of
the candidates it changes, and in confirmation the candidates found (the search expects them to
be the culprits). The tree of outcomes is walked best first on copies of the state, down to
launches worth making (a chance of WORTH or more): the round holds the references' replicates
in calibration, the next split on the likelier side (both sides when it is a toss-up) in the
search, and both sides of a confirmation.

Nothing a branch pretends is kept: after the round the method reads the real values, in the
round's order whatever order they arrived in, and goes on; the launches of a branch that did not
happen are data on their own states, used if the method comes to them.
"""

from __future__ import annotations

import heapq
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from agent import phases
from agent.levels import held, request, update_levels
from agent.phases.search import Chooser
from agent.state import InvestigationState, Launch, PlannedLaunch, Variant

LEAST_CHANCE = 0.1  # an outcome is never taken as certain: the other side keeps this much
# a launch less likely than this to be needed waits for the round that knows (a slot left free
# costs nothing; a launch wasted costs a launch)
WORTH = 0.3


@dataclass(order=True)
class _Node:
    """A launch the method would ask for, in one imagined future, and that future's chance."""

    rank: tuple[float, int]
    state: InvestigationState = field(compare=False)
    req: PlannedLaunch = field(compare=False)
    path: Counter[str] = field(compare=False)


def _quiet(*_: object, **__: object) -> None:
    """The transcript of a future that is only imagined."""


def _suspect_weight(state: InvestigationState) -> dict[str, float]:
    found = {cid for finding in state.findings for cid in finding.ids}
    if state.phase == "confirm" and found:
        return {cid: 1.0 if cid in found else 0.0 for cid in state.hypotheses}
    return {
        cid: h.prior if h.status in ("open", "suspected", "confirmed") else 0.0
        for cid, h in state.hypotheses.items()
    }


def _outcomes(state: InvestigationState, key: str) -> list[tuple[str, float, float]]:
    """What a launch of `key` may measure: (words, value, chance)."""
    config = state.configs[key]
    if config.values:
        return [("as before", statistics.fmean(config.values), 1.0)]
    bad, good = (state.configs[k].values for k in (state.bad_key, state.good_key))
    if key in (state.bad_key, state.good_key) or not bad or not good:
        return []
    weight = _suspect_weight(state)
    total = sum(weight.values()) or 1.0
    gone = set(weight) - held(state, key)  # the suspects this state does not hold
    chance_good = sum(weight[cid] for cid in gone) / total
    chance_good = min(max(chance_good, LEAST_CHANCE), 1 - LEAST_CHANCE)
    return [
        ("like good", statistics.fmean(good), chance_good),
        ("like bad", statistics.fmean(bad), 1 - chance_good),
    ]


def _pretend(state: InvestigationState, req: PlannedLaunch, value: float) -> None:
    config = state.configs[req.key]
    config.launches.append(Launch(value=value, samples=[value], log="", request=req.id))
    state.launches += 1
    if req.key in (state.bad_key, state.good_key):
        state.since_reference = 0
    else:
        state.since_reference += 1
    update_levels(state)


def plan_round(
    state: InvestigationState, slots: int, chooser: Chooser | None, log: Callable[..., None]
) -> list[PlannedLaunch]:
    """The next launch the method asks for and, up to `slots`, those it would ask for next,
    the likeliest to be needed first; each said in the transcript with its round."""
    chosen = _choose(state, slots, chooser, log)
    state.rounds += bool(chosen)
    for req in chosen:
        log("plan", "thought", req.why, config=state.configs[req.key].label, round=state.rounds)
    return chosen


def _choose(
    state: InvestigationState, slots: int, chooser: Chooser | None, log: Callable[..., None]
) -> list[PlannedLaunch]:
    first = phases.next_launch(state, chooser, log)
    if first is None:
        return []
    chosen, taken = [first], Counter([first.key])
    order = 0
    queue = [_Node((-1.0, order), state, first, Counter([first.key]))]
    while queue and len(chosen) < slots:
        node = heapq.heappop(queue)
        chance = -node.rank[0]
        # a launch another future asks for too is needed either way: once
        if node.req is not first and node.path[node.req.key] > taken[node.req.key]:
            state.configs.setdefault(node.req.key, _fresh(node.state, node.req.key))
            chosen.append(request(state, node.req.key, node.req.why))
            taken[node.req.key] += 1
        for words, value, p in _outcomes(node.state, node.req.key):
            if chance * p < WORTH or len(chosen) == slots:
                continue
            future = node.state.model_copy(deep=True)
            following = _following(future, node.req, value)
            if following is None:
                continue
            label = node.state.configs[node.req.key].label
            following.why += f" [ahead: in case {label} measures {words}]"
            order += 1
            path = node.path + Counter([following.key])
            heapq.heappush(queue, _Node((-chance * p, order), future, following, path))
    return chosen


def _following(
    future: InvestigationState, req: PlannedLaunch, value: float
) -> PlannedLaunch | None:
    """What the method asks for next if `req` measures `value`. An imagined future may be one
    the method never meets (values no launch would give): whatever goes wrong there costs the
    round a slot, never the investigation."""
    try:
        _pretend(future, req, value)
        return phases.next_launch(future, None, _quiet)
    except Exception:  # noqa: BLE001 - a guess that fails is no launch
        return None


def _fresh(future: InvestigationState, key: str) -> Variant:
    """A state an imagined future set up, without what that future pretended it measured."""
    return future.configs[key].model_copy(update={"launches": [], "failures": []}, deep=True)
