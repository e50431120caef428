"""`debug-agent investigate`: set up a session, run the graph, print the outcome."""

from __future__ import annotations

import json
import os
import platform
import secrets
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn

from agent.checkpoints import saver
from agent.graph import MAX_STEPS, Context, build_graph
from agent.llm.models import ChatModel, OpenAIModel, replay_model
from agent.llm.reasoner import LLMReasoner
from agent.runner import Runner
from agent.state import InvestigationState
from agent.symptom import parse_symptom
from agent.transcript import Transcript
from tools.config import CONFIG_NAME, LLMSection, TargetConfig, load_config
from tools.errors import ToolError
from tools.folders import sessions_root, state_dir, writable_dir
from tools.init_config import check_config
from tools.lab.create import TEMP_PREFIXES, remove_lab
from tools.repo.candidates import open_repo
from tools.repo.target import target_candidates, target_repo

STYLE = {
    "verdict": "bold",
    "hypothesis": "cyan",
    "experiment": "green",
    "thought": "",
    "error": "red",
}


class LLMOptions(BaseModel):
    """The LLM reasoner's settings: flags, then [llm] in the config, then OPENAI_* env vars."""

    base_url: str | None = None
    model: str | None = None
    max_calls: int | None = None
    max_cost: float | None = None
    api_key: str | None = None
    replay: Path | None = None  # play back a saved session's model answers

    def merged(self, section: LLMSection) -> LLMOptions:
        return LLMOptions(
            base_url=self.base_url or section.base_url or os.environ.get("OPENAI_BASE_URL"),
            model=self.model or section.model,
            max_calls=self.max_calls or section.max_calls,
            max_cost=self.max_cost if self.max_cost is not None else section.max_cost,
            api_key=os.environ.get("OPENAI_API_KEY"),
            replay=self.replay,
        )

    @property
    def enabled(self) -> bool:
        return bool(self.model) or self.replay is not None

    def reasoner(self, config: TargetConfig, log: Callable[..., None]) -> LLMReasoner | None:
        if not self.enabled:
            return None
        model: ChatModel = (
            replay_model(self.replay)
            if self.replay is not None
            else OpenAIModel(self.base_url, self.model or "", self.api_key)
        )
        return LLMReasoner(
            model,
            log,
            max_calls=self.max_calls or 20,
            max_cost=self.max_cost,
            price_per_mtok=(config.llm.usd_per_mtok_in, config.llm.usd_per_mtok_out),
        )


class _LaunchProgress:
    """One progress line: which launch, whether the server loads or the benchmark runs."""

    def __init__(self, bar: Progress) -> None:
        self.bar = bar
        self.task = bar.add_task("gathering facts", total=None)
        self.launch = 0

    def phase(self, name: str) -> None:
        if name == "loading":
            self.launch += 1
            self.bar.update(
                self.task,
                description=f"launch {self.launch}: server loading",
                completed=0,
                total=None,
            )
        else:
            self.bar.update(self.task, description=f"launch {self.launch}: benchmark")

    def request(self, done: int, total: int) -> None:
        self.bar.update(self.task, completed=done, total=total)


def _target(cwd: Path, lab_dir: Path | None, console: Console) -> tuple[Path, str | None]:
    if (cwd / CONFIG_NAME).exists():
        console.print(f"Investigating the target in {cwd / CONFIG_NAME}.")
        return cwd, None
    from tools.lab.create import create_lab

    lab = lab_dir or Path(tempfile.mkdtemp(prefix=TEMP_PREFIXES[0])) / "lab"
    console.print(
        f"No {CONFIG_NAME} in {cwd}: investigating the built-in seed lab (built in {lab})."
    )
    create_lab("seed", lab)
    return lab, "seed"


def run_investigation(
    target_dir: Path,
    symptom_text: str,
    sessions: Path,
    lab: str | None = None,
    good: str | None = None,
    max_launches: int | None = None,
    max_minutes: float | None = None,
    echo: Callable[[str, str, str], None] | None = None,
    progress: _LaunchProgress | None = None,
    llm: LLMOptions | None = None,
) -> dict:
    """Investigate the target configured in `target_dir`; returns the result object."""
    state, ctx = open_session(
        target_dir,
        symptom_text,
        sessions,
        lab,
        good,
        max_launches,
        max_minutes,
        echo,
        progress,
        llm,
    )
    return _run_graph(Path(state.session_dir), ctx, state)


def open_session(
    target_dir: Path,
    symptom_text: str,
    sessions: Path,
    lab: str | None = None,
    good: str | None = None,
    max_launches: int | None = None,
    max_minutes: float | None = None,
    echo: Callable[[str, str, str], None] | None = None,
    progress: _LaunchProgress | None = None,
    llm: LLMOptions | None = None,
    approve: bool = False,
) -> tuple[InvestigationState, Context]:
    """A new session folder, its transcript header, the initial state and the graph's context."""
    import langgraph

    symptom = parse_symptom(symptom_text)
    check_config(target_dir, good)  # what can be known wrong before a launch fails now
    config = load_config(target_dir)
    if good:
        config.target.good = good
    cands = target_candidates(config, target_dir)
    if not cands.candidates:
        raise ToolError(
            f"no difference between the working tree and the good ref "
            f"{config.target.good!r}: nothing to investigate"
        )
    metric = config.bench.metric if config.bench.kind == "command" else symptom.metric
    session_id = time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
    session_dir = writable_dir(sessions, "the sessions folder") / session_id
    session_dir.mkdir()
    options = (llm or LLMOptions()).merged(config.llm)
    transcript = Transcript(
        session_dir / "transcript.jsonl",
        echo=echo,
        secrets=[options.api_key] if options.api_key else [],
    )
    transcript.header(
        {
            "session": session_id,
            "symptom": symptom.model_dump(),
            "target": {"repo": cands.repo, "good": config.target.good, "good_sha": cands.good_sha},
            "config": config.model_dump(),
            "lab": lab,
            "reasoner": f"llm ({options.model})" if options.enabled else "rules",
            "versions": {
                "debug-agent": "0.1.0",
                "python": platform.python_version(),
                "langgraph": getattr(langgraph, "__version__", "?"),
            },
        }
    )
    state = InvestigationState(
        session_id=session_id,
        session_dir=str(session_dir),
        config_path=str(target_dir),
        symptom=symptom,
        metric=metric,
        worse="higher" if symptom.direction == "lower" else "lower",
        max_launches=max_launches or config.budget.max_launches,
        deadline=time.time() + 60 * (max_minutes or config.budget.max_minutes),
    )
    runner = Runner(
        config,
        target_dir,
        cands,
        on_phase=progress.phase if progress else None,
        on_request=progress.request if progress else None,
    )
    return state, Context(
        runner=runner,
        transcript=transcript,
        repo=open_repo(target_repo(config, target_dir)),
        reasoner=options.reasoner(config, transcript.event),
        approve=approve,
    )


def _run_graph(session_dir: Path, ctx: Context, start: InvestigationState | None) -> dict:
    """Run (start) or continue (None) the session's graph to its end; return the result."""

    connection = sqlite3.connect(session_dir / "checkpoints.sqlite", check_same_thread=False)
    try:
        graph = build_graph(ctx, saver(connection))
        final = graph.invoke(
            start,
            {
                "configurable": {"thread_id": session_dir.name},
                "recursion_limit": 4 * MAX_STEPS + 20,
            },
            durability="sync",
        )
    finally:
        connection.close()
    return final["result"] if isinstance(final, dict) else final.result


def investigate(
    symptom_text: str,
    cwd: Path,
    good: str | None = None,
    max_launches: int | None = None,
    max_minutes: float | None = None,
    as_json: bool = False,
    lab_dir: Path | None = None,
    llm: LLMOptions | None = None,
) -> dict:
    console = Console(stderr=as_json, highlight=False, soft_wrap=True)
    parse_symptom(symptom_text)  # a bad symptom fails before anything is built
    writable_dir(state_dir(), "the state folder")  # lab truths and pidfiles go there
    target_dir, lab = _target(cwd, lab_dir, console)
    built_here = lab is not None and lab_dir is None  # a seed lab for this run only
    started = finished = False
    try:
        config = load_config(target_dir)
        repo_root = (
            None
            if config.host is not None  # the repo is on the node
            else Path(open_repo(target_repo(config, target_dir)).working_tree_dir or target_dir)
        )
        with Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=console,
            transient=True,
        ) as bar:
            state, ctx = open_session(
                target_dir,
                symptom_text,
                sessions_root(cwd, repo_root),
                lab,
                good,
                max_launches,
                max_minutes,
                _echo(console),
                _LaunchProgress(bar),
                llm,
            )
            started = True
            result = _run_interruptible(Path(state.session_dir), ctx, state, console)
        finished = True
    finally:
        # kept while a session may still resume on it; gone once finished or never started
        if built_here and (finished or not started):
            remove_lab(target_dir)
    _print_result(result, console, as_json)
    return result


def _run_interruptible(
    session_dir: Path, ctx: Context, start: InvestigationState | None, console: Console
) -> dict:
    """The graph to its end; Ctrl-C or SIGTERM stops it (servers stopped, worktrees removed
    on the way out), records it, and says how to go on."""
    try:
        return _run_graph(session_dir, ctx, start)
    except (KeyboardInterrupt, SystemExit) as stop:
        why = "SIGTERM" if isinstance(stop, SystemExit) else "Ctrl-C"
        hint = f"debug-agent investigate --resume {session_dir.name}"
        ctx.transcript.event("stop", "error", f"interrupted ({why}); continue with: {hint}")
        console.print(
            f"interrupted ({why}): session {session_dir.name} is kept; continue with: {hint}"
        )
        raise


def _saved_state(session: Path) -> dict:

    connection = sqlite3.connect(session / "checkpoints.sqlite", check_same_thread=False)
    try:
        saved = saver(connection).get_tuple({"configurable": {"thread_id": session.name}})
    finally:
        connection.close()
    if saved is None:
        raise ToolError(f"session {session.name} has no checkpoint to resume from")
    return dict(saved.checkpoint["channel_values"])


def resume(session: Path, as_json: bool = False) -> dict:
    """Continue a killed investigation from its last checkpoint, in the same session folder."""

    from tools.proc.server import reap_stale_servers
    from tools.repo.worktree import reap_stale_worktrees

    console = Console(stderr=as_json, highlight=False, soft_wrap=True)
    values = _saved_state(session)
    if values.get("phase") == "done" and values.get("result"):
        result = values["result"]
    else:
        target_dir = Path(values["config_path"])
        config = load_config(target_dir)
        cands = target_candidates(config, target_dir)
        saved_ids = [c.id if hasattr(c, "id") else c["id"] for c in values.get("candidates", [])]
        if saved_ids and saved_ids != [c.id for c in cands.candidates]:
            raise ToolError(
                f"the target's changes differ from when session {session.name} "
                "started: start a new investigation instead"
            )
        reaped = reap_stale_servers()
        if config.host is None:  # on a node, its supervisor cleaned up when the link went
            reap_stale_worktrees(target_dir)
        console.print(
            f"Resuming session {session.name} at phase {values.get('phase')} "
            f"({values.get('launches', 0)} launches done; {len(reaped)} orphan "
            "server(s) stopped)."
        )
        transcript = Transcript(session / "transcript.jsonl", echo=_echo(console))
        transcript.event(
            "resume", "thought", f"resumed after an interruption, at phase {values.get('phase')}"
        )
        result = _run_interruptible(
            session,
            Context(
                runner=Runner(config, target_dir, cands),
                transcript=transcript,
                repo=open_repo(target_repo(config, target_dir)),
            ),
            None,
            console,
        )
    _print_result(result, console, as_json)
    return result


MAX_SHOWN_CHARS = 400  # a terminal line; the transcript keeps the whole text


def _echo(console: Console) -> Callable[[str, str, str], None]:
    def echo(node: str, kind: str, text: str) -> None:
        if kind in STYLE:
            style = STYLE[kind]
            if len(text) > MAX_SHOWN_CHARS:
                text = (
                    f"{text[:MAX_SHOWN_CHARS]}... ({len(text) - MAX_SHOWN_CHARS} more "
                    "characters in the transcript)"
                )
            console.print(
                f"[dim]{node:>11}[/dim] "
                + (f"[{style}]{escape(text)}[/{style}]" if style else escape(text))
            )

    return echo


def _print_result(result: dict, console: Console, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2, default=str) + "\n")
    else:
        console.print(
            f"[bold]{result['status']}[/bold] after {result['launches']} launches; "
            f"report: {result['session_dir']}/report.md"
        )
