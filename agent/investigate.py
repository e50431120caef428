"""`debug-agent investigate`: start (or resume) a session, run it to the end, print the outcome."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from agent.llm.options import LLMOptions
from agent.rest_of_range import MAX_SEARCHES, MIN_LAUNCHES, joined, rest_after
from agent.session import Session, console_echo, saved_values, target_or_seed_lab
from agent.session_lock import check_free
from agent.symptom import given_or_configured, parse_symptom
from agent.views import LaunchProgress, progress_bar
from tools.config import load_config
from tools.errors import ToolError
from tools.folders import sessions_root, state_dir, writable_dir
from tools.lab.create import remove_lab
from tools.repo.candidates import open_repo
from tools.repo.target import target_repo
from tools.visible import visible


def investigate(
    symptom_text: str | None,
    cwd: Path,
    good: str | None = None,
    max_launches: int | None = None,
    max_minutes: float | None = None,
    as_json: bool = False,
    lab_dir: Path | None = None,
    llm: LLMOptions | None = None,
    good_env: Path | None = None,
) -> dict:
    console = Console(stderr=as_json, highlight=False, soft_wrap=True)
    if symptom_text is not None:
        parse_symptom(symptom_text)  # a bad symptom fails before anything is built
    writable_dir(state_dir(), "the state folder")  # lab truths and pidfiles go there
    target_dir, lab = target_or_seed_lab(cwd, lab_dir, console)
    built_here = lab is not None and lab_dir is None  # a seed lab for this run only
    started = finished = False
    try:
        config = load_config(target_dir)
        symptom_text = given_or_configured(symptom_text, config, "investigate")
        parse_symptom(symptom_text, config.bench)  # about what this target's bench measures
        repo_root = (
            None
            if config.host is not None  # the repo is on the node
            else Path(open_repo(target_repo(config, target_dir)).working_tree_dir or target_dir)
        )
        budget = max_launches or config.budget.max_launches
        results: list[dict] = []
        search_from = good
        while True:
            with (
                progress_bar(console) as bar,
                Session.start(
                    target_dir,
                    symptom_text,
                    sessions_root(cwd, repo_root),
                    lab=lab,
                    good=search_from,
                    good_env=good_env,
                    max_launches=budget - sum(r["launches"] for r in results),
                    max_minutes=max_minutes,
                    echo=console_echo(console),
                    progress=LaunchProgress(bar, "gathering facts"),
                    llm=llm,
                ) as session,
            ):
                started = True
                results.append(_run_interruptible(session, console))
            search_from = _search_on_from(results, budget, console)
            if search_from is None:
                break
        result = joined(results)
        finished = True
    finally:
        # kept while a session may still resume on it; gone once finished or never started
        if built_here and (finished or not started):
            remove_lab(target_dir)
    _print_result(result, console, as_json)
    return result


def _search_on_from(results: list[dict], budget: int, console: Console) -> str | None:
    """Where to search again: later commits hold more of the gap than the first bad commit
    found last, and the budget has room for another search."""
    search_from = rest_after(results[-1])
    left = budget - sum(r["launches"] for r in results)
    if search_from is None or left < MIN_LAUNCHES or len(results) == MAX_SEARCHES:
        return None
    console.print(f"later commits hold more of the gap: searching on from {search_from[:12]}")
    return search_from


def _run_interruptible(session: Session, console: Console) -> dict:
    """The session to its end; Ctrl-C or SIGTERM stops it (servers stopped, worktrees removed
    on the way out), records it, and says how to go on."""
    try:
        return session.run_to_end()
    except (KeyboardInterrupt, SystemExit) as stop:
        name = session.folder.name
        why = _signal_name(stop)
        hint = f"debug-agent investigate --resume {name}"
        session.ctx.transcript.event("stop", "error", f"interrupted ({why}); continue with: {hint}")
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            console.print(f"interrupted ({why}): session {name} is kept; continue with: {hint}")
        raise


def _signal_name(stop: BaseException) -> str:
    """Ctrl-C, or the signal a SystemExit of agent/cli/main.py carries (its code: 128 + it)."""
    code = stop.code if isinstance(stop, SystemExit) else None
    if isinstance(code, int) and code > 128 and code - 128 in signal.valid_signals():
        return signal.Signals(code - 128).name
    return "Ctrl-C" if isinstance(stop, KeyboardInterrupt) else "stopped"


def resume(
    folder: Path,
    as_json: bool = False,
    max_launches: int | None = None,
    max_minutes: float | None = None,
) -> dict:
    """Continue a killed investigation from its last checkpoint, in the same session folder;
    with `max_launches`, also one its budget stopped (for `max_minutes` more, default [budget])."""
    from tools.proc.server import reap_stale_servers
    from tools.repo.worktree import reap_stale_worktrees

    console = Console(stderr=as_json, highlight=False, soft_wrap=True)
    check_free(folder)
    values = saved_values(folder)
    finished = values.get("phase") == "done" and values.get("result")
    if finished and max_launches is None:
        result = values["result"]
    else:
        if finished:
            _budget_stopped(folder.name, values, max_launches)
        with Session.reopen(folder, echo=console_echo(console), same_changes=True) as session:
            reaped = reap_stale_servers()
            runner = session.ctx.runner
            if runner.config.host is None:  # on a node, its supervisor cleaned up already
                repo = open_repo(target_repo(runner.config, runner.config_dir))
                reap_stale_worktrees(Path(repo.working_tree_dir or runner.config_dir))
            console.print(
                f"Resuming session {folder.name} at phase {values.get('phase')} "
                f"({values.get('launches', 0)} launches done; {len(reaped)} orphan "
                "server(s) stopped)."
            )
            if max_launches is not None:
                minutes = max_minutes or runner.config.budget.max_minutes
                _raise_budget(session, values, max_launches, minutes)
            else:
                session.ctx.transcript.event(
                    "resume",
                    "thought",
                    f"resumed after an interruption, at phase {values.get('phase')}",
                )
            result = _run_interruptible(session, console)
    _print_result(result, console, as_json)
    return result


def _budget_stopped(name: str, values: dict, max_launches: int | None) -> None:
    """A finished session goes on only where its budget stopped it, with launches left."""
    if not values.get("stopped_in"):
        raise ToolError(
            f"session {name} finished ({values['result'].get('status')}) without spending its "
            "budget: there is nothing to continue"
        )
    spent = values.get("launches", 0)
    if max_launches is not None and max_launches <= spent:
        raise ToolError(
            f"session {name} has spent {spent} launches already: give --max-launches above {spent}"
        )


def _raise_budget(session: Session, values: dict, max_launches: int, minutes: float) -> None:
    """A session the budget stopped goes on from where it stopped, with the budget raised in
    the checkpoint (as chat's /budget does); an interrupted one gets it as a user decision,
    applied by its next plan step."""
    deadline = time.time() + 60 * minutes
    stopped_in = values.get("stopped_in") if values.get("phase") == "done" else None
    if stopped_in:
        session.update(
            {
                "max_launches": max_launches,
                "deadline": deadline,
                "phase": stopped_in,
                "stopped_in": None,
                "status": None,
                "result": None,
            },
            as_node="judge",
        )
    else:
        decision = {"kind": "budget", "max_launches": max_launches, "deadline": deadline}
        session.ctx.inbox.append(decision)
    session.ctx.transcript.event(
        "resume",
        "user",
        f"resumed with the budget raised to {max_launches} launches (until {minutes:g} "
        f"minutes from now), at phase {stopped_in or values.get('phase')}",
    )


def _print_result(result: dict, console: Console, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2, default=str) + "\n")
    else:
        console.print(
            f"[bold]{result['status']}[/bold] after {result['launches']} launches; "
            f"report: {escape(visible(str(result['session_dir'])))}/report.md"
        )
        for rest in result.get("rest", []):
            console.print(
                f"then from {rest['good'][:12]}: [bold]{rest['status']}[/bold] after "
                f"{rest['launches']} launches (session {rest['session']})"
            )
