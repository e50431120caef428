"""A member needed by the test, but whose share of the gap is too small to name: load noise on
a shared CPU gave hunks 1 % [0 % to 2 %] of a real gap, and they were confirmed as culprits. A
culprit must explain at least [judge] min_share of the gap at the low end of its interval."""

from __future__ import annotations

from agent.levels import ensure_config
from agent.phases import confirm
from agent.phases.needed import context_key, needed
from agent.phases.negligible import group_share
from agent.state import Finding, Hypothesis
from tests.conftest import bare_state, measured
from tools.repo.candidates import Candidate


def test_a_one_percent_share_is_negligible_not_a_culprit() -> None:
    state = bare_state("per call 162ms (was 10)")
    state.candidates = [
        Candidate(kind="hunk", id=cid, file=f"{cid}.py", patch="") for cid in ("regex", "load")
    ]
    measured(state, {"regex", "load"}, [162.0, 161.5, 162.4, 161.8])
    state.bad_key = ensure_config(state, {"regex", "load"}).key
    measured(state, set(), [10.0, 10.02, 9.98, 10.01])
    state.good_key = ensure_config(state, set()).key
    state.findings = [
        Finding(ids=["load", "regex"], low_key=state.bad_key, high_key=state.good_key)
    ]
    state.hypotheses = {
        c: Hypothesis(candidate=c, prior=1.0, reasons=[]) for c in ("regex", "load")
    }
    confirm.start(state)
    conf = state.confirmation
    assert conf is not None and sorted(conf.drop_keys) == ["load", "regex"]
    measured(state, set(), [10.01, 9.99])  # revert both: the good value
    measured(state, {"regex"}, [157.5, 157.8, 157.3, 157.6])  # good + regex: 99 % of the gap
    measured(state, {"load"}, [10.2, 10.18, 10.22, 10.19])  # good + load: 1 % of it
    assert needed(state, conf, "load") is True  # measurable: it is not noise alone
    share = group_share(state, conf, "load", context_key(state, conf, "load"))
    assert share is not None and share[1] < state.min_share

    assert confirm.conclude(state) == "search"  # the set shrinks to what explains the gap
    assert list(conf.negligible) == ["load"]
    assert state.hypotheses["load"].status == "cleared"
    assert "negligible" in state.hypotheses["load"].evidence[-1]
    assert [f.ids for f in state.findings] == [["regex"]]
