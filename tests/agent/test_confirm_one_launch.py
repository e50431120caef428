"""Confirmation never names a member, or sends the search on, on the strength of one launch
that sits between the ends (a disturbed one, maybe): the numbers of a transformers-lab run in
a full suite beside another test worker, which confirmed a decoy with a 1 % share."""

from __future__ import annotations

from agent.levels import ensure_config
from agent.phases import confirm
from agent.phases.needed import context_key, needed
from agent.phases.remainder import keep_confirmed_on_budget, remainder_p
from agent.state import InvestigationState
from tests.conftest import confirming, measured


def _state(found: list[str]) -> InvestigationState:
    return confirming(
        "per token 40ms", ["utils", "decoy", "other"], [35.3, 35.2], [10.4, 10.35], found
    )


def test_a_member_is_not_needed_on_one_launch_that_reproduces_most_of_the_regression() -> None:
    state = _state(["decoy", "utils"])
    conf = state.confirmation
    assert conf is not None
    measured(state, {"other"}, [10.8])  # bad - both: restores
    measured(state, {"utils", "decoy"}, [35.1])  # good + both: reproduces
    without_decoy = measured(state, {"utils"}, [32.1])  # one launch at 92 %
    measured(state, {"decoy"}, [12.0])  # without utils: nothing reproduced
    assert needed(state, conf, "decoy") is None  # not yet: a second launch decides
    measured(state, {"utils"}, [35.3])
    assert needed(state, conf, "decoy") is False
    assert needed(state, conf, "utils") is True  # 12 among 10.4: one launch will do
    assert without_decoy == conf.drop_keys["decoy"]


def test_completeness_does_not_search_on_a_remainder_seen_on_one_launch() -> None:
    state = _state(["utils"])
    conf = state.confirmation
    assert conf is not None
    # bad - utils: 88 % of the log gap, 6.5 % of the time added: a remainder on one launch
    measured(state, {"decoy", "other"}, [12.0])
    measured(state, {"utils"}, [35.2, 35.25])  # good + utils: reproduces
    planned = confirm.plan(state)
    assert planned is not None and planned.key == conf.revert_key
    assert "remainder" in planned.why
    measured(state, {"decoy", "other"}, [10.4])  # the two: 3 % of the time, under MIN_REMAINDER
    assert confirm.plan(state) is None
    assert confirm.conclude(state) == "confirmed"


def test_a_remainder_too_small_to_matter_is_reported_not_searched() -> None:
    """Significant, but 3 % of a 3.4x gap: the fast end's jitter or a change too small to
    matter beside the symptom; the report gives the unexplained share and its interval."""
    state = _state(["utils"])
    conf = state.confirmation
    assert conf is not None
    measured(state, {"decoy", "other"}, [10.8, 10.82, 10.79])
    measured(state, {"utils"}, [35.2, 35.25])
    assert remainder_p(state, conf) is None
    assert confirm.plan(state) is None
    assert confirm.conclude(state) == "confirmed"


def test_a_budget_spent_on_the_remainder_keeps_the_set_confirmed_before() -> None:
    state = _state(["utils"])
    conf = state.confirmation
    assert conf is not None
    measured(state, {"decoy", "other"}, [10.4])
    measured(state, {"utils"}, [35.2])
    conf.confirmed_before = ["utils"]
    conf.culprits = ["utils", "decoy"]  # the round that searched the remainder, unfinished
    assert keep_confirmed_on_budget(state)
    assert conf.culprits == ["utils"] and state.status == "confirmed"
    assert conf.revert_key == ensure_config(state, {"decoy", "other"}).key
    assert "budget ran out" in state.notes[-1]


def test_an_undecided_member_is_measured_in_the_bad_context_and_judged_on_both() -> None:
    """A lab scenario at 15 % noise (two additive causes): without the smaller one the set
    still reproduces 80-98 % on good, too close to tell; in the bad state's context the same
    member alone of the set keeps a clear share. One contrast over both contexts decides."""
    state = _state(["decoy", "utils"])  # here both are causes: "decoy" the smaller one
    conf = state.confirmation
    assert conf is not None
    state.configs[state.bad_key].launches.clear()
    measured(state, {"utils", "decoy", "other"}, [28.0, 27.3, 28.6, 26.8, 28.1])
    state.configs[state.good_key].launches.clear()
    measured(state, set(), [17.5, 16.7, 20.4, 18.1])
    measured(state, {"other"}, [16.3, 17.6])  # bad - both: restores
    measured(state, {"utils", "decoy"}, [28.3, 27.0])  # good + both: reproduces
    measured(state, {"decoy"}, [24.1, 23.0])  # without utils: short, clearly
    measured(state, {"utils"}, [26.2, 28.8, 21.7, 23.2])  # without the smaller one: unclear
    assert needed(state, conf, "decoy") is None
    planned = confirm.plan(state)
    context = context_key(state, conf, "decoy")  # bad - utils
    assert planned is not None and planned.key == context and "revert the others" in planned.why
    measured(state, {"decoy", "other"}, [21.7, 22.4])  # the smaller cause alone: a clear share
    assert needed(state, conf, "decoy") is True


def test_a_decoy_measured_in_both_contexts_is_not_needed() -> None:
    state = _state(["decoy", "utils"])
    conf = state.confirmation
    assert conf is not None
    measured(state, {"other"}, [10.5, 10.3])  # bad - both
    measured(state, {"utils", "decoy"}, [35.1, 35.4])  # good + both
    measured(state, {"utils"}, [35.0, 35.6])  # without the decoy: all of it
    measured(state, {"decoy", "other"}, [10.4, 10.5])  # the decoy alone in bad: nothing
    assert needed(state, conf, "decoy") is False


def test_both_contexts_bound_a_members_share_tighter_than_one() -> None:
    """A lab run (worker env, 2.5 % noise, a 26 % gap): the set without one member reproduces
    all of the regression, yet on two launches its 95 % bound on good alone stays above 15 %;
    with the member also measured alone in the bad state's context, both bound it under."""
    state = _state(["decoy", "utils"])
    conf = state.confirmation
    assert conf is not None
    state.configs[state.bad_key].launches.clear()
    measured(state, {"utils", "decoy", "other"}, [24.6, 25.3, 24.0, 24.8])
    state.configs[state.good_key].launches.clear()
    measured(state, set(), [19.5, 18.9, 19.8, 19.1])
    measured(state, {"other"}, [19.6, 19.0])  # bad - both
    measured(state, {"utils", "decoy"}, [24.5, 24.9])  # good + both
    measured(state, {"utils"}, [24.7, 24.3])  # good + the set without the decoy
    assert needed(state, conf, "decoy") is None
    measured(state, {"decoy", "other"}, [19.3, 19.4])  # the decoy alone of the set, in bad
    assert needed(state, conf, "decoy") is False


def test_a_search_for_the_rest_among_the_kept_keeps_what_was_dropped() -> None:
    """The tp lab under real timing noise: a remainder after the confirmed set sends the search
    over the other kept candidates only; a file dropped on the import trace stays dropped, with
    its evidence in the result (it vanished from it, its status still "dropped")."""
    from agent.phases.remainder import search_the_rest
    from agent.relevance import Relevance
    from agent.state import Hypothesis

    state = _state(["utils"])
    conf = state.confirmation
    assert conf is not None
    state.hypotheses = {
        cid: Hypothesis(candidate=cid, prior=1.0, reasons=[]) for cid in ("utils", "decoy", "other")
    }
    state.hypotheses["other"].status = "dropped"
    state.dropped = [Relevance(candidate="other", on_path=False, reason="never", evidence=[])]
    search_the_rest(state, conf, ["decoy"], [])
    assert [d.candidate for d in state.dropped] == ["other"]
    search_the_rest(state, conf, ["decoy"], ["other"])
    assert state.dropped == [] and state.hypotheses["other"].status == "open"


def test_a_remainder_is_measured_against_a_good_reference_launched_twice() -> None:
    """The shape of werkzeug's first bad commit in a loaded CI run: its parent, launched once
    by the bisection, read low (1.32 ms where its tree runs at 1.7), and the culprit's hunks
    reverted left a "remainder" that cost six launches to search. There the gap was 200x (the
    remainder, 0.1 % of the time added, is now too small to ask about); here it is 3.4x. The
    parent again first, and the remainder is the load's."""
    state = confirming(
        "latency_ms 36 (was 10)", ["multipart", "docs"], [35.3], [8.2], ["multipart"]
    )
    conf = state.confirmation
    assert conf is not None
    measured(state, {"docs"}, [10.45, 10.4])  # bad - multipart
    measured(state, {"multipart"}, [35.2, 35.25])  # good + multipart
    planned = confirm.plan(state)
    assert planned is not None and planned.key == state.good_key, planned
    assert "remainder" in planned.why and "again" in planned.why
    measured(state, set(), [10.4])
    assert confirm.plan(state) is None
    assert confirm.conclude(state) == "confirmed"
    assert state.confirmation is not None and state.confirmation.culprits == ["multipart"]


def test_a_remainder_is_judged_in_the_metrics_own_units() -> None:
    """pymarkdown's first bad commit: 0.09 ms good, 67 ms bad; its regex hunk reverted reads
    0.135 ms. That is 6 % of the log gap (over MIN_REMAINDER) but 0.07 % of the time the
    regression added: no second cause to look for (it once cost two launches)."""
    state = confirming(
        "latency_ms 67 (was 0.09)", ["hr", "docs"], [67.2, 64.3], [0.087, 0.09], ["hr"]
    )
    conf = state.confirmation
    assert conf is not None
    measured(state, {"docs"}, [0.135])  # bad - hr
    measured(state, {"hr"}, [63.6])  # good + hr
    assert remainder_p(state, conf) is None
    assert confirm.plan(state) is None
    assert confirm.conclude(state) == "confirmed"
