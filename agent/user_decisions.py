"""What the user decides in a chat, applied to the state by the plan node (and recorded)."""

from __future__ import annotations

from collections.abc import Callable

from agent.relevance import Relevance
from agent.state import InvestigationState


def apply_user_decision(
    state: InvestigationState, decision: dict, log: Callable[..., None]
) -> None:
    kind = decision.get("kind")
    cid = decision.get("candidate", "")
    if kind == "drop" and cid in state.hypotheses:
        reason = decision.get("reason") or "no reason given"
        h = state.hypotheses[cid]
        h.status = "dropped"
        h.evidence.append(f"dropped by the user: {reason}")
        state.dropped.append(
            Relevance(candidate=cid, on_path=False, reason="dropped by the user", evidence=[reason])
        )
        for task in state.tasks:
            if cid in task.ids:  # plan this step again without it
                task.ids = [i for i in task.ids if i != cid]
                task.stage, task.first, task.second, task.first_key = "start", [], [], None
        state.tasks = [t for t in state.tasks if t.ids]
        log("plan", "user", f"the user dropped {cid}: {reason}", candidate=cid)
    elif kind == "test" and cid in state.hypotheses:
        state.hypotheses[cid].prior *= 100
        state.hypotheses[cid].reasons.append("the user asked to test it first")
        log("plan", "user", f"the user asked to test {cid} first", candidate=cid)
    elif kind == "budget":
        state.max_launches = int(decision["max_launches"])
        if "deadline" in decision:
            state.deadline = float(decision["deadline"])
        log("plan", "user", f"the user set the launch budget to {state.max_launches}")
