"""The investigation as a LangGraph graph; it reads like the method:

    gather -> hypothesize -> plan -> experiment -> judge -> plan -> ... -> report

`plan` asks the phases (agent.phases: calibrate, search, confirm) for one launch at a time;
`experiment` makes it; `judge` scores it. The nodes get the runner, transcript, repository and
reasoner from LangGraph's runtime context. Each node works on a copy of the state and returns
all its fields (`dict(s)`), so a node killed half-way re-runs from its top; a SQLite
checkpointer (durability "sync") keeps every step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agent import phases
from agent.disturbed import set_aside_disturbed
from agent.gather import facts_from
from agent.hypothesize import hypothesize as hypotheses_of
from agent.levels import request, update_levels
from agent.llm.claims import apply_rankings
from agent.llm.reasoner import LLMReasoner
from agent.phases import lines
from agent.phases.launches import record, record_experiment, record_failure, references
from agent.report import finish
from agent.runner import Runner
from agent.state import Failure, InvestigationState
from agent.transcript import Transcript
from agent.user_decisions import apply_user_decision

if TYPE_CHECKING:
    import git
    from langgraph.runtime import Runtime


@dataclass
class Context:
    """What the nodes use besides the state (LangGraph's runtime context: never checkpointed)."""

    runner: Runner
    transcript: Transcript
    repo: git.Repo
    reasoner: LLMReasoner | None = None
    approve: bool = False  # ask before each launch (chat): a LangGraph interrupt, before any work
    inbox: list[dict] = field(default_factory=list)  # the user's decisions (chat), for plan

    @property
    def log(self) -> Callable[..., None]:
        return self.transcript.event

    def approved(self, what: str) -> bool:
        if not self.approve:
            return True
        from langgraph.types import interrupt

        return interrupt({"launch": what}) == "yes"


def gather(state: InvestigationState, runtime: Runtime[Context]) -> dict:
    """The candidates, then each reference launched once with the import trace (what the bad
    state runs; what the good state ran, for the files the bad state deleted)."""
    ctx, s = runtime.context, state.model_copy(deep=True)
    if not ctx.approved("the bad and good states, with the import trace (gather facts)"):
        return {}
    bad = references(s, ctx.runner.cands)  # every candidate; the bad and good configs
    lines.candidates(s, ctx.runner.config.target.good, ctx.log)
    results = []
    for config in (bad, s.configs[s.good_key]):
        outcome = ctx.runner.launch(s, config, request(s, config.key, "gather").id, trace=True)
        if isinstance(outcome, Failure):
            record_failure(s, config, outcome)
            lines.failed(s, config, outcome, ctx.log)
            s.status, s.phase = "error", "report"
            s.notes.append(f"the {config.label} reference cannot run: {outcome.error}")
            return dict(s)
        record(s, config, outcome[0])
        lines.facts(s, config, outcome[0], ctx.log)
        results.append(outcome[1])
    s.facts = facts_from(results[0], node_gpu=results[0].gpu, good=results[1])
    lines.described(s, ctx.log)
    s.phase = "hypothesize"
    return dict(s)


def hypothesize(state: InvestigationState, runtime: Runtime[Context]) -> dict:
    ctx, s = runtime.context, state.model_copy(deep=True)
    lines.hypotheses(s, hypotheses_of(s, ctx.repo), ctx.log)
    if ctx.reasoner is not None:
        apply_rankings(s, ctx.reasoner.rank(s), ctx.log)
        s.llm = {"model": ctx.reasoner.model.name, **ctx.reasoner.usage.model_dump()}
    lines.kept(s, ctx.log)
    s.phase = "calibrate"
    return dict(s)


def plan(state: InvestigationState, runtime: Runtime[Context]) -> dict:
    """The user's decisions (chat) first; then the phases' next launch, or the report."""
    ctx, s = runtime.context, state.model_copy(deep=True)
    s.steps += 1
    while ctx.inbox:
        apply_user_decision(s, ctx.inbox.pop(0), ctx.log)
    s.pending = phases.next_launch(s, ctx.reasoner.choose if ctx.reasoner else None, ctx.log)
    if s.pending is not None:
        ctx.log("plan", "thought", s.pending.why, config=s.configs[s.pending.key].label)
    return dict(s)


def experiment(state: InvestigationState, runtime: Runtime[Context]) -> dict:
    ctx, s = runtime.context, state.model_copy(deep=True)
    req = s.pending
    assert req is not None
    config = s.configs[req.key]
    if not ctx.approved(f"{config.label} ({req.why})"):
        s.pending = None  # skipped: plan chooses again, with the user's latest decisions
        return dict(s)
    done = [launch.request for launch in config.launches] + [f.request for f in config.failures]
    if req.id in done:
        return dict(s)  # done before a crash: not launched twice
    outcome = ctx.runner.launch(s, config, req.id)
    if isinstance(outcome, Failure):
        record_failure(s, config, outcome)
        lines.failed(s, config, outcome, ctx.log)
        return dict(s)
    launch, result = outcome
    drift = record_experiment(s, config, launch)
    lines.launched(s, config, launch, result.retried, drift, ctx.log)
    return dict(s)


def judge(state: InvestigationState, runtime: Runtime[Context]) -> dict:
    s = state.model_copy(deep=True)
    if s.pending is not None:
        for line in set_aside_disturbed(s):
            runtime.context.log("judge", "thought", line)
        update_levels(s)
        lines.verdict(s, s.pending.key, runtime.context.log)
    return dict(s)


def report(state: InvestigationState, runtime: Runtime[Context]) -> dict:
    ctx, s = runtime.context, state.model_copy(deep=True)
    finish(s, ctx)
    lines.narrative(s, ctx.reasoner, ctx.log)
    lines.outcome(s, ctx.log)
    s.phase = "done"
    return dict(s)


def route(state: InvestigationState) -> str:
    return "experiment" if state.pending is not None else "report"


def after_gather(state: InvestigationState) -> str:
    return "report" if state.phase == "report" else "hypothesize"  # a reference cannot run


def build_graph(checkpointer=None):
    from langgraph.graph import END, START, StateGraph

    graph = StateGraph(InvestigationState, context_schema=Context)
    for node in (gather, hypothesize, plan, experiment, judge, report):
        graph.add_node(node.__name__, node)
    graph.add_edge(START, "gather")
    graph.add_conditional_edges(
        "gather", after_gather, {"hypothesize": "hypothesize", "report": "report"}
    )
    graph.add_edge("hypothesize", "plan")
    graph.add_conditional_edges("plan", route, {"experiment": "experiment", "report": "report"})
    graph.add_edge("experiment", "judge")
    graph.add_edge("judge", "plan")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=checkpointer)
