"""The lines the graph's nodes write to the transcript, worded here so that agent/graph.py
reads as the method."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent.gather import describe
from agent.hypothesize import SHOWN_EACH, dropped_summary, link_sentence, links_summary
from agent.levels import between, noise
from agent.phases.hot_commit import hot_tie
from agent.report.finish import write_narrative
from agent.state import Failure, InvestigationState, Launch, Variant
from agent.stats import ALPHA, SEARCH_ALPHA

if TYPE_CHECKING:
    from agent.llm.reasoner import LLMReasoner

Log = Callable[..., None]


BULK = 1000  # untracked files in one top folder past which it is named (a venv, node_modules)


def candidates(state: InvestigationState, good: str, log: Log) -> None:
    log(
        "gather",
        "tool_call",
        f"diff against {good}: {len(state.candidates)} candidates",
        candidates=[c.summary() for c in state.candidates],
    )
    untracked = Counter(
        (c.file or "").partition("/")[0] for c in state.candidates if c.origin == "untracked"
    )
    for folder, count in sorted(untracked.items()):
        if count >= BULK and folder:
            log(
                "gather",
                "thought",
                f"{folder}/ holds {count} untracked files, each a candidate carried into every "
                "launch's tree (and slowing each): if the server never reads them, list the "
                "folder in .gitignore or .git/info/exclude",
            )


def facts(state: InvestigationState, config: Variant, launch: Launch, log: Log) -> None:
    if launch.retried:
        log("gather", "thought", f"{config.label}: {launch.retried}; started again")
    log(
        "gather",
        "tool_result",
        f"{config.label} state launched with the import trace: "
        f"{state.metric} {launch.value:.3g} {state.unit}"
        + (f" (its environment {launch.environment})" if launch.environment else ""),
        log=launch.log,
        samples=launch.samples,
        ran_on=launch.node,
    )


def described(state: InvestigationState, log: Log) -> None:
    for line in describe(state):
        log("gather", "thought", line)


def stop_if(state: InvestigationState, why: str | None, log: Log) -> None:
    """With a reason, the investigation ends here: status error, the reason its note."""
    if why is not None:
        state.notes.append(why)
        log("gather", "error", why)
        state.status, state.phase = "error", "report"


def failed(state: InvestigationState, config: Variant, failure: Failure, log: Log) -> None:
    """A launch that measured nothing: why, where its log is, and the log's last lines."""
    what = {
        "build": "its tree did not build",
        "environment": "its package set did not build or does not hold together",
        "start": "its server did not start (twice)",
        "died": "its server ended while it was measured",
    }
    log(
        "experiment",
        "error",
        f"launch {state.launches}: {config.label}: unresolved, "
        f"{what.get(failure.stage, 'its bench failed')}: {failure.error}"
        + (f" (log: {failure.log})" if failure.log and failure.log not in failure.error else ""),
        config=config.label,
        held=config.ids,
        base=config.base,
        stage=failure.stage,
        tail=failure.tail,
    )


def hypotheses(state: InvestigationState, sentences: list[str], log: Log) -> None:
    many = len(state.dropped) > SHOWN_EACH
    linked = {link_sentence(link) for link in state.links}
    many_links = len(linked) > SHOWN_EACH
    for sentence in sentences:
        log("hypothesize", "hypothesis", sentence, quiet=many_links if sentence in linked else many)
    if many_links:
        for line in links_summary(state):
            log("hypothesize", "thought", line)
    if many:  # the terminal gets one line per reason; the transcript has every one above
        for line in dropped_summary(state):
            log("hypothesize", "thought", line)


def bisection(state: InvestigationState, why_not: list[str], log: Log) -> None:
    b, groups = state.bisection, state.commits
    for line in why_not:
        log("hypothesize", "thought", line)
    if b is None and groups.commits:
        log(
            "hypothesize",
            "thought",
            f"good..HEAD holds {len(groups.commits)} first-parent commits: the search reverts "
            "whole commits first, latest first (weighted by the hunks' priors), then the hunks "
            "inside the culprit commit with the rest of the range applied",
        )
    if b is None:
        return
    light = sum(1 for s in b.states[1:-1] if s.unused)
    log(
        "hypothesize",
        "thought",
        f"good..bad holds {len(b.states) - 1} states (first-parent commits"
        + (", the uncommitted changes last" if b.states[-1].sha is None else "")
        + "): bisected on their own trees first, as git bisect does, halving the prior mass"
        + (f"; {light} touch only files no traced launch used: weighed light" if light else "")
        + ", then the first bad commit's hunks alone",
    )
    if b.patterns:
        log("hypothesize", "thought", b.patterns)
    if b.hot:
        tie = hot_tie(state)
        hunk = f" ({tie[1]}, tied to {tie[0]:.0%} of the gap)" if tie else ""
        hot = b.hot[0]
        log(
            "hypothesize",
            "thought",
            f"the profile's hot lines{hunk} were written by {(hot.sha or '')[:8]} "
            f"{hot.subject!r}, off the first-parent line: it and its parent are probed "
            "first (bad and good: the first bad commit in two probes)",
        )


def kept(state: InvestigationState, log: Log) -> None:
    ranked = sorted(
        (h for h in state.hypotheses.values() if h.status == "open"), key=lambda h: -h.prior
    )
    for rank, h in enumerate(ranked):
        log(
            "hypothesize",
            "hypothesis",
            f"kept {h.candidate} (prior {h.prior:.2g}: {'; '.join(h.reasons)})",
            candidate=h.candidate,
            prior=h.prior,
            quiet=rank >= SHOWN_EACH,
        )
    if len(ranked) > SHOWN_EACH:
        log(
            "hypothesize",
            "thought",
            f"... and {len(ranked) - SHOWN_EACH} more kept (every one in the transcript)",
        )


def launched(
    state: InvestigationState,
    config: Variant,
    launch: Launch,
    retried: str | None,
    drift: str | None,
    log: Log,
) -> None:
    if retried:
        log(
            "experiment",
            "thought",
            f"{retried}; measured again on a new connection (only that measurement counts)",
        )
    if launch.retried:
        log("experiment", "thought", f"{config.label}: {launch.retried}; started again")
    if drift:
        log("experiment", "thought", drift)
    environment = f"; its environment {launch.environment}" if launch.environment else ""
    log(
        "experiment",
        "experiment",
        f"launch {state.launches}: {config.label}: {state.metric} "
        f"{launch.value:.3g} {state.unit} ({state.launch_words.format(n=_requests(launch))}"
        f"{environment})",
        config=config.label,
        held=config.ids,
        base=config.base,
        value=launch.value,
        samples=launch.samples,
        log=launch.log,
        ran_on=launch.node,
    )


LEVELS = {
    "restored": "at the good level",
    "none": "at the bad level",
    "partial": "in between",
    "unknown": "not clear yet",
}


def verdict(state: InvestigationState, key: str, log: Log) -> None:
    """Where an experiment's config sits between the references (once both are measured)."""
    config = state.configs[key]
    references = (state.bad_key, state.good_key)
    if key in references or not all(state.configs[k].values for k in (key, *references)):
        return  # a reference, or a launch that measured nothing
    # at the level the phase decides on: the search's navigation is looser than a verdict
    alpha = SEARCH_ALPHA if state.phase == "search" else ALPHA
    result = between(state, key, state.bad_key, state.good_key, alpha=alpha)
    n = noise(state)
    effect = (
        f"reproduces {1 - result.r:.0%} of the regression"
        if config.base == "good"
        else f"restores {result.r:.0%} of the gap"
    )
    log(
        "judge",
        "verdict",
        f"{config.label}: {effect}, {LEVELS[result.verdict]} (p vs bad "
        f"{result.p_vs_bad:.2g}, p vs good {result.p_vs_good:.2g}, launch noise "
        f"{n.sigma:.1%} on {n.df} df, level {alpha:.0%})",
        config=config.label,
        r=result.r,
        verdict=result.verdict,
        launches=result.launches,
    )


def narrative(state: InvestigationState, reasoner: LLMReasoner | None, log: Log) -> None:
    """The model's account of the result (with the LLM reasoner): into the result, the
    transcript and the report."""
    if reasoner is None or state.result is None:
        return
    text = reasoner.narrate(state.result)
    state.llm = {"model": reasoner.model.name, **reasoner.usage.model_dump()}
    claims = [c.model_dump() for c in state.claims]
    state.result["llm"] = {**state.llm, "claims": claims, "narrative": text}
    if text:
        log("report", "thought", f"the model's narrative: {text}")
        write_narrative(state, text)


def outcome(state: InvestigationState, log: Log) -> None:
    for cid, h in state.hypotheses.items():
        if h.status in ("confirmed", "suspected", "cleared"):
            log(
                "report",
                "hypothesis",
                f"{cid}: {h.status}" + (f" ({h.evidence[-1]})" if h.evidence else ""),
                candidate=cid,
                status=h.status,
            )
    log("report", "thought", f"status {state.status}; report in {state.session_dir}/report.md")


def _requests(launch: Launch) -> int:
    return launch.requests or len(launch.samples)
