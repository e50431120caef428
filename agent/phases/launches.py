"""The references (bad and good), each launch's (and failed launch's) bookkeeping, and the
references' drift: re-measured every few search launches, each time held against its earlier
launches with the test that sets disturbed launches aside (agent.disturbed)."""

from __future__ import annotations

import statistics

from agent.disturbed import disagreement
from agent.levels import ensure_config, reference_unresolved, request
from agent.phases.lines import Log, candidates, facts, failed, launched
from agent.runner import Runner
from agent.state import Failure, InvestigationState, Launch, PlannedLaunch, Variant
from tools.experiment import ExperimentResult
from tools.repo.tree_check import check_target
from tools.secrets import mask

DRIFT_EVERY = 5  # re-measure a reference every this many search launches


def references(state: InvestigationState, runner: Runner, log: Log) -> bool:
    """Every candidate of the diff (masked: the runner keeps the real values), and the two
    references, bad (all of them) and good (none). False (and a note) when the bad state the
    candidates rebuild is not the working tree: nothing would be measured on the user's tree."""
    cands = runner.cands
    state.candidates = mask(cands).candidates
    state.good_sha = cands.good_sha
    state.bad_key = ensure_config(state, {c.id for c in state.candidates}).key
    state.good_key = ensure_config(state, set()).key
    candidates(state, runner.config.target.good, log)
    check = check_target(runner.target)
    carried = f"; carried as-is: {'; '.join(check.carried)}" if check.carried else ""
    if check.ok:
        log(
            "gather",
            "thought",
            f"the bad state rebuilt is the working tree: {check.reason}{carried}",
        )
        return True
    differ = f"; differs: {', '.join(check.differ)}" if check.differ else ""
    state.notes.append(
        f"the bad state cannot be rebuilt as the working tree ({check.reason}{differ})"
        f"{carried}: nothing was measured"
    )
    log("gather", "error", state.notes[-1])
    return False


def record(state: InvestigationState, config: Variant, launch: Launch) -> None:
    config.launches.append(launch)
    state.launches += 1


def record_failure(state: InvestigationState, config: Variant, failure: Failure) -> None:
    """A launch that measured nothing: kept with its variant, counted against the budget."""
    config.failures.append(failure)
    state.launches += 1


def launch_traced(
    state: InvestigationState, runner: Runner, log: Log
) -> tuple[ExperimentResult, ExperimentResult] | None:
    """Each reference's first launch, with the import trace: bad and good in one round (one
    after the other without slots), and with slots to spare the replicates calibration will
    ask for; None (and a note) as soon as a reference cannot run."""
    results: dict[str, ExperimentResult] = {}
    waiting = [state.bad_key, state.good_key]
    spare = [state.bad_key, state.good_key][: max(0, min(2, runner.slots - 2))]
    while waiting:
        planned = [(state.configs[k], request(state, k, "gather").id, True) for k in waiting]
        planned += [(state.configs[k], request(state, k, "calibrate").id, False) for k in spare]
        state.rounds += 1
        outcomes = runner.launch_round(state, planned)
        for (config, _, traced), outcome in zip(planned, outcomes, strict=True):
            if not traced:
                record_experiment(state, config, outcome, log)
            elif isinstance(outcome, Failure):
                record_failure(state, config, outcome)
                failed(state, config, outcome, log)
                if reference_unresolved(state, config):
                    state.notes.append(
                        f"the {config.label} reference cannot run: {outcome.error}"
                        + _interpreter_hint(runner, outcome)
                    )
                    return None
            else:
                record(state, config, outcome[0])
                facts(state, config, outcome[0], log)
                results[config.key] = outcome[1]
        waiting, spare = [k for k in waiting if k not in results], []
    return results[state.bad_key], results[state.good_key]


def record_experiment(
    state: InvestigationState,
    config: Variant,
    outcome: tuple[Launch, ExperimentResult] | Failure,
    log: Log,
) -> None:
    """Record an experiment's launch (or its failure) and say so; for a reference
    re-measured, how it compares with its earlier launches (the test that sets disturbed
    launches aside)."""
    if isinstance(outcome, Failure):
        record_failure(state, config, outcome)
        failed(state, config, outcome, log)
        return
    launch, result = outcome
    before = list(config.values)
    record(state, config, launch)
    state.experiments += 1
    drift = None
    if config.key not in (state.bad_key, state.good_key):
        state.since_reference += 1
    else:
        state.since_reference = 0
        p = disagreement(state, config, launch)
        if p is not None:
            drift = (
                f"{config.label} re-measured: {launch.value:.3g}, its earlier launches "
                f"{statistics.fmean(before):.3g} (p = {p:.2g} against the launch noise)"
            )
    launched(state, config, launch, result.retried, drift, log)


def drift_check(state: InvestigationState) -> PlannedLaunch | None:
    """A launch of the less measured reference, when the search has gone long without one."""
    if state.phase != "search" or state.since_reference < DRIFT_EVERY:
        return None
    bad, good = state.configs[state.bad_key], state.configs[state.good_key]
    key = state.bad_key if len(bad.values) <= len(good.values) else state.good_key
    return request(state, key, f"drift check: re-measure {state.configs[key].label}")


def _interpreter_hint(runner: Runner, failure: Failure) -> str:
    """A module missing under {python}: that is debug-agent's interpreter, which need not have
    the project's dependencies (installed with pipx, say)."""
    config = runner.config
    commands = f"{config.launch.command} {config.bench.command or ''} {config.build.command or ''}"
    if "No module named" not in failure.error or "{python}" not in commands:
        return ""
    return (
        f"; {{python}} is debug-agent's own interpreter ({config.python}), which may lack "
        "the project's dependencies: name the project's Python in the command instead"
    )
