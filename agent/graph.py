"""The investigation as a LangGraph graph; it reads like the method:

    gather -> hypothesize -> plan -> experiment -> judge -> plan -> ... -> report

`plan` walks the phases (calibrate, search, confirm) and asks for one launch at a time;
`experiment` makes it; `judge` scores it. Nodes start from a copy of the state, so a node killed
half-way re-runs from its top; a SQLite checkpointer (durability "sync") keeps every step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import git

from agent import calibration, confirmation, search
from agent.disturbed import set_aside_disturbed
from agent.gather import describe, facts_from
from agent.hypothesize import SHOWN_EACH, dropped_summary, hypothesize
from agent.levels import between, ensure_config, noise, request, update_levels
from agent.llm.claims import apply_rankings
from agent.llm.reasoner import LLMReasoner
from agent.report import finish, write_narrative
from agent.runner import Runner
from agent.state import InvestigationState, Task
from agent.stats import level
from agent.transcript import Transcript
from agent.user_decisions import apply_user_decision
from tools.secrets import mask

MAX_STEPS = 400  # our own limit: LangGraph's recursion limit is far higher
DRIFT_EVERY = 5  # re-measure a reference every this many search launches


@dataclass
class Context:
    runner: Runner
    transcript: Transcript
    repo: git.Repo
    reasoner: LLMReasoner | None = None
    approve: bool = False  # ask before each launch (chat), through a LangGraph interrupt
    inbox: list[dict] = field(default_factory=list)  # the user's decisions (chat), for plan


def _fields(state: InvestigationState) -> dict[str, Any]:
    return {name: getattr(state, name) for name in type(state).model_fields}


def build_graph(ctx: Context, checkpointer=None):
    from langgraph.graph import END, START, StateGraph

    log = ctx.transcript.event

    def approved(what: str) -> bool:
        """Ask first, launch after: the interrupt comes before any work of the node."""
        if not ctx.approve:
            return True
        from langgraph.types import interrupt

        return interrupt({"launch": what}) == "yes"

    def gather(state: InvestigationState) -> dict:
        if not approved("the bad state, with the import trace (gather facts)"):
            return {}
        s = state.model_copy(deep=True)
        s.candidates = mask(ctx.runner.cands).candidates  # the runner keeps the real values
        s.good_sha = ctx.runner.cands.good_sha
        everything = {c.id for c in s.candidates}
        s.bad_key = ensure_config(s, everything).key
        s.good_key = ensure_config(s, set()).key
        log(
            "gather",
            "tool_call",
            f"diff against {ctx.runner.config.target.good}: {len(s.candidates)} candidates",
            candidates=[c.summary() for c in s.candidates],
        )
        request = s.next_request
        s.next_request += 1
        launch, result = ctx.runner.launch(s, s.configs[s.bad_key], request, trace=True)
        s.configs[s.bad_key].launches.append(launch)
        s.launches += 1
        s.facts = facts_from(result, node_gpu=result.gpu)
        log(
            "gather",
            "tool_result",
            f"bad state launched with the import trace: "
            f"{s.metric} {launch.value:.3g} {s.symptom.unit}",
            log=launch.log,
            samples=launch.samples,
        )
        for line in describe(s):
            log("gather", "thought", line)
        s.phase = "hypothesize"
        return _fields(s)

    def hypothesize_node(state: InvestigationState) -> dict:
        s = state.model_copy(deep=True)
        sentences = hypothesize(s, ctx.repo)
        many = len(s.dropped) > SHOWN_EACH
        for sentence in sentences:
            log("hypothesize", "hypothesis", sentence, quiet=many)
        if many:  # the terminal gets one line per reason; the transcript has every one above
            for line in dropped_summary(s):
                log("hypothesize", "thought", line)
        if ctx.reasoner is not None:
            apply_rankings(s, ctx.reasoner.rank(s), log)
            s.llm = {"model": ctx.reasoner.model.name, **ctx.reasoner.usage.model_dump()}
        kept = sorted(
            (h for h in s.hypotheses.values() if h.status == "open"), key=lambda h: -h.prior
        )
        for rank, h in enumerate(kept):
            log(
                "hypothesize",
                "hypothesis",
                f"kept {h.candidate} (prior {h.prior:.2g}: {'; '.join(h.reasons)})",
                candidate=h.candidate,
                prior=h.prior,
                quiet=rank >= SHOWN_EACH,
            )
        if len(kept) > SHOWN_EACH:
            log(
                "hypothesize",
                "thought",
                f"... and {len(kept) - SHOWN_EACH} more kept (every one in the transcript)",
            )
        s.phase = "calibrate"
        return _fields(s)

    def plan(state: InvestigationState) -> dict:
        s = state.model_copy(deep=True)
        s.steps += 1
        s.pending = None
        while ctx.inbox:
            apply_user_decision(s, ctx.inbox.pop(0), log)
        while s.pending is None and s.phase not in ("report", "done"):
            if s.launches >= s.max_launches or time.time() > s.deadline or s.steps > MAX_STEPS:
                s.status = s.status or "budget_exhausted"
                log(
                    "plan",
                    "thought",
                    f"budget spent ({s.launches} launches): reporting what is known",
                )
                s.stopped_in = s.phase  # a raised budget (chat) goes on from here
                s.phase = "report"
            elif s.phase == "calibrate":
                s.pending = calibration.plan(s)
                if s.pending is None:
                    _after_calibration(s)
            elif s.phase == "search":
                s.pending = _drift_check(s) or search.plan(
                    s, ctx.reasoner.choose if ctx.reasoner else None
                )
                if s.pending is None:
                    if not s.findings:
                        s.status = "inconclusive"
                        s.phase = "report"
                        log(
                            "plan",
                            "thought",
                            "the search found no candidate that restores any share of the gap",
                        )
                    else:
                        confirmation.start(s)
                        s.phase = "confirm"
            elif s.phase == "confirm":
                s.pending = confirmation.plan(s)
                if s.pending is None:
                    _after_confirmation(s)
        if s.pending is not None:
            log("plan", "thought", s.pending.why, config=s.configs[s.pending.key].label)
        return _fields(s)

    def _after_calibration(s: InvestigationState) -> None:
        verdict = calibration.decide(s)
        log("plan", "verdict", f"calibration: {verdict}: {s.notes[-1] if s.notes else ''}")
        if verdict == "no_regression":
            s.status = "no_regression"
            s.phase = "report"
            return
        kept = [cid for cid, h in s.hypotheses.items() if h.status == "open"]
        if not kept:
            kept = list(s.hypotheses)
        s.tasks = [Task(ids=kept, low_key=s.bad_key, high_key=s.good_key)]
        s.phase = "search"

    def _after_confirmation(s: InvestigationState) -> None:
        outcome = confirmation.conclude(s)
        assert s.confirmation is not None
        names = ", ".join(s.confirmation.culprits)
        if outcome == "search":
            log("plan", "thought", s.notes[-1])
            s.phase = "search"
            return
        s.status = outcome  # "confirmed" or "suspected"
        log("plan", "verdict", f"{outcome}: {{{names}}}")
        s.phase = "report"

    def _drift_check(s: InvestigationState) -> Any:
        if s.phase != "search" or s.since_reference < DRIFT_EVERY:
            return None
        bad, good = s.configs[s.bad_key], s.configs[s.good_key]
        key = s.bad_key if len(bad.values) <= len(good.values) else s.good_key
        return request(s, key, f"drift check: re-measure {s.configs[key].label}")

    def experiment(state: InvestigationState) -> dict:
        s = state.model_copy(deep=True)
        req = s.pending
        assert req is not None
        config = s.configs[req.key]
        if not approved(f"{config.label} ({req.why})"):
            s.pending = None  # skipped: plan chooses again, with the user's latest decisions
            return _fields(s)
        if any(launch.request == req.id for launch in config.launches):
            return _fields(s)  # done before a crash: not launched twice
        launch, result = ctx.runner.launch(s, config, req.id)
        if result.retried:
            log(
                "experiment",
                "thought",
                f"{result.retried}; measured again on a new "
                "connection (only that measurement counts)",
            )
        before = list(config.values)
        config.launches.append(launch)
        s.launches += 1
        s.experiments += 1
        if req.key in (s.bad_key, s.good_key):
            s.since_reference = 0
            sigma = noise(s).sigma
            if before and abs(level([launch.value]) - level(before)) > 4 * sigma:
                log(
                    "experiment",
                    "thought",
                    f"drift: {config.label} now measures "
                    f"{launch.value:.3g}, its earlier launches {sum(before) / len(before):.3g} "
                    f"(more than 4 noise sigmas apart)",
                )
        else:
            s.since_reference += 1
        log(
            "experiment",
            "experiment",
            f"launch {s.launches}: {config.label}: {s.metric} "
            f"{launch.value:.3g} {s.symptom.unit} (median of {len(launch.samples)} requests)",
            config=config.label,
            held=config.ids,
            base=config.base,
            value=launch.value,
            samples=launch.samples,
            log=launch.log,
        )
        return _fields(s)

    def judge(state: InvestigationState) -> dict:
        s = state.model_copy(deep=True)
        req = s.pending
        if req is None:
            return _fields(s)
        for line in set_aside_disturbed(s):
            log("judge", "thought", line)
        update_levels(s)
        config = s.configs[req.key]
        if s.configs[s.good_key].values and req.key not in (s.bad_key, s.good_key):
            result = between(s, req.key, s.bad_key, s.good_key)
            n = noise(s)
            level = {
                "restored": "at the good level",
                "none": "at the bad level",
                "partial": "in between",
                "unknown": "not clear yet",
            }[result.verdict]
            effect = (
                f"reproduces {1 - result.r:.0%} of the regression"
                if config.base == "good"
                else f"restores {result.r:.0%} of the gap"
            )
            log(
                "judge",
                "verdict",
                f"{config.label}: {effect}, {level} (p vs bad "
                f"{result.p_vs_bad:.2g}, p vs good {result.p_vs_good:.2g}, launch noise "
                f"{n.sigma:.1%} on {n.df} df)",
                config=config.label,
                r=result.r,
                verdict=result.verdict,
                launches=result.launches,
            )
        return _fields(s)

    def report(state: InvestigationState) -> dict:
        s = state.model_copy(deep=True)
        finish(s, ctx)
        if ctx.reasoner is not None and s.result is not None:
            narrative = ctx.reasoner.narrate(s.result)
            s.llm = {"model": ctx.reasoner.model.name, **ctx.reasoner.usage.model_dump()}
            s.result["llm"] = {
                **s.llm,
                "claims": [c.model_dump() for c in s.claims],
                "narrative": narrative,
            }
            if narrative:
                log("report", "thought", f"the model's narrative: {narrative}")
                write_narrative(s, narrative)
        for cid, h in s.hypotheses.items():
            if h.status in ("confirmed", "suspected", "cleared"):
                log(
                    "report",
                    "hypothesis",
                    f"{cid}: {h.status}" + (f" ({h.evidence[-1]})" if h.evidence else ""),
                    candidate=cid,
                    status=h.status,
                )
        log("report", "thought", f"status {s.status}; report in {s.session_dir}/report.md")
        s.phase = "done"
        return _fields(s)

    def route(state: InvestigationState) -> str:
        return "experiment" if state.pending is not None else "report"

    graph = StateGraph(InvestigationState)
    graph.add_node("gather", gather)
    graph.add_node("hypothesize", hypothesize_node)
    graph.add_node("plan", plan)
    graph.add_node("experiment", experiment)
    graph.add_node("judge", judge)
    graph.add_node("report", report)
    graph.add_edge(START, "gather")
    graph.add_edge("gather", "hypothesize")
    graph.add_edge("hypothesize", "plan")
    graph.add_conditional_edges("plan", route, {"experiment": "experiment", "report": "report"})
    graph.add_edge("experiment", "judge")
    graph.add_edge("judge", "plan")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=checkpointer)
