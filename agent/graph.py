"""The investigation as a LangGraph graph; it reads like the method:

    gather -> hypothesize -> plan -> experiment -> judge -> plan -> ... -> report

`plan` asks the phases (agent.phases) for the next launch, and with [cluster] slots for a round
of launches useful together (agent.rounds); `experiment` makes them; `judge` scores them. On a
commit range plan bisects the commits first; hypothesize then sees the first bad one's hunks.
The nodes get the runner, transcript, repository and reasoner from LangGraph's runtime context;
each works on a copy of the state (a node killed half-way re-runs from its top).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agent.disturbed import set_aside_disturbed
from agent.gather import gather_facts, measured_elsewhere
from agent.hypothesize import hypothesize as hypotheses_of
from agent.levels import update_levels
from agent.llm.claims import rank_with
from agent.llm.reasoner import LLMReasoner
from agent.narrow import lay_out, narrow
from agent.phases import lines
from agent.phases.launches import launch_traced, record_experiment, references
from agent.report.finish import finish
from agent.rounds import plan_round
from agent.runner import Runner
from agent.state import InvestigationState
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
        from langgraph.types import interrupt

        return not self.approve or interrupt({"launch": what}) == "yes"


def gather(state: InvestigationState, runtime: Runtime[Context]) -> dict:
    """The candidates; each reference launched once with the import trace."""
    ctx, s = runtime.context, state.model_copy(deep=True)
    if not ctx.approved("the bad and good states, with the import trace (gather facts)"):
        return {}
    launched = references(s, ctx.runner, ctx.log) and launch_traced(s, ctx.runner, ctx.log)
    if not launched:  # the working tree cannot be rebuilt, or a reference cannot run
        s.status, s.phase = "error", "report"
        return dict(s)
    gather_facts(s, launched[0], launched[1])  # and where the time moved, from their profiles
    lines.described(s, ctx.log)
    s.phase = "hypothesize"
    lines.stop_if(s, measured_elsewhere(s), ctx.log)  # no configuration would run as built
    return dict(s)


def hypothesize(state: InvestigationState, runtime: Runtime[Context]) -> dict:
    """Every candidate a hypothesis (after a bisection: the first bad commit's hunks)."""
    ctx, s = runtime.context, state.model_copy(deep=True)
    narrow(s, ctx.runner, ctx.log)  # after the bisection only
    lines.hypotheses(s, hypotheses_of(s, ctx.repo), ctx.log)
    lay_out(s, ctx.repo, ctx.runner.config.host is not None, ctx.log)  # before it only
    rank_with(ctx.reasoner, s, ctx.log)  # the LLM reasoner's priors, when there is one
    lines.kept(s, ctx.log)
    s.phase = "calibrate" if s.phase == "hypothesize" else s.phase  # or the report: nothing left
    return dict(s)


def plan(state: InvestigationState, runtime: Runtime[Context]) -> dict:
    """The user's decisions (chat) first; then the next round of launches, or the report."""
    ctx, s = runtime.context, state.model_copy(deep=True)
    s.steps += 1
    while ctx.inbox:
        apply_user_decision(s, ctx.inbox.pop(0), ctx.log)
    chooser = ctx.reasoner.choose if ctx.reasoner else None
    s.pending = plan_round(s, ctx.runner.slots, chooser, ctx.log)  # logs it, counts it
    return dict(s)


def experiment(state: InvestigationState, runtime: Runtime[Context]) -> dict:
    ctx, s = runtime.context, state.model_copy(deep=True)
    todo = [req for req in s.pending if not s.configs[req.key].made(req.id)]  # not twice
    if not ctx.approved("; ".join(f"{s.configs[r.key].label} ({r.why})" for r in todo)):
        s.pending = []  # skipped: plan chooses again, with the user's latest decisions
        return dict(s)
    outcomes = ctx.runner.launch_round(s, [(s.configs[r.key], r.id, False) for r in todo])
    for req, outcome in zip(todo, outcomes, strict=True):  # in the round's order, always
        record_experiment(s, s.configs[req.key], outcome, ctx.log)
    return dict(s)


def judge(state: InvestigationState, runtime: Runtime[Context]) -> dict:
    s = state.model_copy(deep=True)
    if s.pending:
        for line in set_aside_disturbed(s):
            runtime.context.log("judge", "thought", line)
        update_levels(s)
        for key in dict.fromkeys(req.key for req in s.pending):
            lines.verdict(s, key, runtime.context.log)
    return dict(s)


def report(state: InvestigationState, runtime: Runtime[Context]) -> dict:
    ctx, s = runtime.context, state.model_copy(deep=True)
    finish(s, ctx)
    lines.narrative(s, ctx.reasoner, ctx.log)
    lines.outcome(s, ctx.log)
    s.phase = "done"
    return dict(s)


def route(state: InvestigationState) -> str:  # after gather and plan
    if state.pending:
        return "experiment"
    return "hypothesize" if state.phase == "hypothesize" else "report"


def build_graph(checkpointer=None):
    from langgraph.graph import END, START, StateGraph

    graph = StateGraph(InvestigationState, context_schema=Context)
    for node in (gather, hypothesize, plan, experiment, judge, report):
        graph.add_node(node.__name__, node)
    graph.add_edge(START, "gather")
    graph.add_conditional_edges("gather", route, ["hypothesize", "report"])
    graph.add_edge("hypothesize", "plan")
    graph.add_conditional_edges("plan", route, ["experiment", "hypothesize", "report"])
    graph.add_edge("experiment", "judge")
    graph.add_edge("judge", "plan")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=checkpointer)
