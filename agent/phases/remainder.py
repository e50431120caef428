"""Completeness: what is left of the regression beside a culprit set.

Reverting the set may leave a remainder (search the other candidates), applying it may fall
short (search for the partner it needs), and a search for the rest may lead nowhere or run out
of budget: then the set an earlier round confirmed both ways stands, and the remainder is
reported as unexplained. A remainder under MIN_REMAINDER of the gap is only reported.
"""

from __future__ import annotations

from agent.levels import all_ids, between, ensure_config
from agent.phases.attribute import apply_verdict
from agent.phases.carried import set_aside_carried
from agent.phases.search import names_used
from agent.shares import units_share
from agent.state import Confirmation, InvestigationState, Task
from agent.stats import SEARCH_ALPHA


def keep_confirmed_on_budget(state: InvestigationState) -> bool:
    """The budget ran out while the remainder was searched for: the set an earlier round
    confirmed both ways stands (its evidence is unchanged), the remainder is unexplained."""
    conf = state.confirmation
    if conf is None or not conf.confirmed_before:
        return False
    state.notes.append(
        f"the budget ran out while searching for the rest of the regression: "
        f"{{{', '.join(conf.confirmed_before)}}} stands, confirmed both ways; the remainder "
        "stays unexplained"
    )
    back_to(state, conf, conf.confirmed_before)
    state.status = "confirmed"
    set_aside_carried(state, conf, apply_verdict(state))
    return True


def back_to(state: InvestigationState, conf: Confirmation, culprits: list[str]) -> None:
    """The confirmation as it stood for `culprits` (its configs are measured already)."""
    conf.culprits = list(culprits)
    conf.revert_key = ensure_config(state, all_ids(state) - set(culprits)).key
    conf.apply_key = ensure_config(state, set(culprits)).key
    conf.undecided = []


# a remainder smaller than this share of the gap is reported (with its interval), not searched:
# after a 100x regression, a few percent of the gap left is the fast end's own jitter or a
# change too small to matter beside the symptom, and chasing it costs the rest of the budget
MIN_REMAINDER = 0.05


def remainder_p(state: InvestigationState, conf: Confirmation) -> float | None:
    """How likely a remainder this large is from noise alone, when reverting the set leaves at
    least MIN_REMAINDER of the gap, on the log scale and in the metric's own units (None when it
    does not, or the set's revert measured nothing: it cannot run). After a 700x regression a
    revert at 0.135 ms against a good 0.09 ms leaves 6 % of the log gap and 0.07 % of the time
    added: nothing a second cause could explain (pymarkdown spent two launches asking)."""
    if not state.configs[conf.revert_key].values:
        return None
    result = between(state, conf.revert_key, state.bad_key, state.good_key, alpha=SEARCH_ALPHA)
    if result.r > 1 - MIN_REMAINDER or units_share(state, conf.revert_key) < MIN_REMAINDER:
        return None
    return result.p_vs_good


def remainder_significant(state: InvestigationState, conf: Confirmation) -> bool:
    """Reverting the set leaves a share of the regression above zero (at the search's level:
    this decides where to look next; what is found is confirmed at the strict one)."""
    p = remainder_p(state, conf)
    return p is not None and p <= SEARCH_ALPHA


def search_partner(state: InvestigationState, conf: Confirmation, kept: list[str]) -> None:
    """Reverting the set is enough but it does not hurt alone: a partner is missing,
    likeliest among candidates that share a name with it (one sets what another reads)."""
    names = set().union(*(names_used(state, cid) for cid in conf.culprits))
    for cid in kept:
        if names & names_used(state, cid):
            state.hypotheses[cid].prior *= 10
            state.hypotheses[cid].reasons.append(
                f"shares {', '.join(sorted(names & names_used(state, cid)))} with the culprit found"
            )
    state.tasks = [Task(kind="partner", ids=kept, low_key=conf.apply_key, high_key=state.bad_key)]
    state.notes.append(
        f"{{{', '.join(conf.culprits)}}} alone does not reproduce the "
        "regression on the good state: searching for what it needs"
    )


def search_the_rest(
    state: InvestigationState, conf: Confirmation, kept: list[str], dropped: list[str]
) -> None:
    """Reverting the set leaves part of the regression: search the rest (with `dropped`, the
    pruned candidates too)."""
    ids = kept + dropped
    for cid in dropped:
        state.hypotheses[cid].status = "open"
        state.hypotheses[cid].evidence.append(
            "brought back: the kept candidates do not explain the whole regression"
        )
    state.dropped = [d for d in state.dropped if d.candidate not in dropped]  # the rest stay
    state.tasks = [
        Task(ids=ids, low_key=conf.revert_key, high_key=state.good_key, interference_checked=True)
    ]
    state.notes.append(
        f"reverting {{{', '.join(conf.culprits)}}} leaves part of the regression: "
        "searching the rest" + (", pruned candidates included" if dropped else "")
    )
