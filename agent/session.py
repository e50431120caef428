"""One investigation's session: its folder, transcript, checkpointer, graph and context.

    Session.start(target_dir, symptom, sessions)  a new session folder, its first state
    Session.reopen(folder)                         a saved session, at its last checkpoint
    session.run(value) / session.run_to_end()      to the next interrupt (chat) / to the end
    session.close()                                (or use it as a context manager)

`investigate`, `chat` and `lab bench` run the graph through it; `replay --rerun` names its new
session with `new_session_id`. The front-ends' shared console pieces (the echo of the
transcript, the target or the seed lab) are here too.
"""

from __future__ import annotations

import platform
import secrets
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from agent.checkpoints import saver
from agent.error_end import end_with_error
from agent.graph import Context, build_graph
from agent.llm.options import LLMOptions
from agent.phases import MAX_STEPS
from agent.runner import Runner
from agent.session_lock import check_free, hold_session
from agent.state import Bisection, InvestigationState
from agent.symptom import Symptom, parse_symptom
from agent.transcript import Transcript
from tools.config import CONFIG_NAME, TargetConfig, load_config
from tools.errors import STORAGE_ERRORS, ToolError
from tools.folders import at_repo_root, writable_dir
from tools.init_config import check_config
from tools.lab.create import TEMP_PREFIXES
from tools.repo.candidates import CandidateSet, open_repo
from tools.repo.target import target_candidates, target_repo
from tools.repo.worktree import reused_worktrees
from tools.stack.good_env import with_good_env
from tools.visible import visible

if TYPE_CHECKING:
    from tools.progress import Progress


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def saved_values(folder: Path) -> dict:
    """The values of a saved session's last checkpoint."""
    connection = sqlite3.connect(folder / "checkpoints.sqlite", check_same_thread=False)
    try:
        saved = saver(connection).get_tuple({"configurable": {"thread_id": folder.name}})
        values = dict(saved.checkpoint["channel_values"]) if saved is not None else None
        if values is not None:
            InvestigationState.model_validate(values)  # a whole state, or none to go on from
    # not a database, a damaged one, bytes no serializer reads, a state that is not one
    except (sqlite3.DatabaseError, ValueError, TypeError, KeyError, NotImplementedError) as e:
        why = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise ToolError(
            f"session {folder.name} cannot be resumed: its checkpoints.sqlite cannot be read "
            f"({why}); its transcript and report stay readable (debug-agent replay "
            f"{folder.name})"
        ) from None
    finally:
        connection.close()
    if values is None:
        raise ToolError(f"session {folder.name} has no checkpoint to resume from")
    return values


class Session:
    """A session folder with its checkpointer, graph and the graph's context."""

    def __init__(
        self,
        folder: Path,
        ctx: Context,
        first: InvestigationState | None = None,
        saved: dict | None = None,
    ) -> None:
        self.folder, self.ctx = folder, ctx
        self.lock = hold_session(folder)
        self.first = first  # a new session's first state; None: on from the checkpoint
        self.saved = saved  # a reopened session's values at its last checkpoint
        self.connection = sqlite3.connect(folder / "checkpoints.sqlite", check_same_thread=False)
        self.graph = build_graph(saver(self.connection))
        self.config = {
            "configurable": {"thread_id": folder.name},
            "recursion_limit": 4 * MAX_STEPS + 20,
        }

    @classmethod
    def start(
        cls,
        target_dir: Path,
        symptom_text: str,
        sessions: Path,
        *,
        lab: str | None = None,
        good: str | None = None,
        good_env: Path | None = None,
        max_launches: int | None = None,
        max_minutes: float | None = None,
        echo: Callable[[str, str, str], None] | None = None,
        progress: Progress | None = None,
        llm: LLMOptions | None = None,
        approve: bool = False,
    ) -> Session:
        """A new session folder, its transcript header, the first state and the context."""
        config, cands = _target(target_dir, good, good_env)
        symptom = parse_symptom(symptom_text, config.bench)  # in the bench's units
        options = (llm or LLMOptions()).merged(config.llm)
        session_id = new_session_id()
        folder = writable_dir(sessions, "the sessions folder") / session_id
        folder.mkdir()
        transcript = Transcript(
            folder / "transcript.jsonl",
            echo=echo,
            secrets=[options.api_key] if options.api_key else [],
        )
        transcript.header(_header(session_id, symptom, config, cands, lab, options))
        state = InvestigationState(
            session_id=session_id,
            session_dir=str(folder),
            config_path=str(target_dir),
            good_env=str(good_env) if good_env else None,
            symptom=symptom,
            metric=config.bench.metric if config.bench.kind == "command" else symptom.metric,
            worse="higher" if symptom.direction == "lower" else "lower",
            max_launches=max_launches or config.budget.max_launches,
            min_share=config.judge.min_share,
            launch_words=launch_words(config),
            deadline=time.time() + 60 * (max_minutes or config.budget.max_minutes),
            workload=config.bench.workload(),
        )
        runner = Runner(
            config,
            target_dir,
            cands,
            on_phase=progress.phase if progress else None,
            on_request=progress.request if progress else None,
        )
        ctx = Context(
            runner=runner,
            transcript=transcript,
            repo=open_repo(target_repo(config, target_dir)),
            reasoner=options.reasoner(config, transcript.event),
            approve=approve,
        )
        return cls(folder, ctx, first=state)

    @classmethod
    def reopen(
        cls,
        folder: Path,
        echo: Callable[[str, str, str], None] | None = None,
        approve: bool = False,
        same_changes: bool = False,
    ) -> Session:
        """A saved session at its last checkpoint, on its target as it is now (with
        `same_changes`, only if the target's changes are the ones it started with)."""
        check_free(folder)
        values = saved_values(folder)
        target_dir = Path(values["config_path"])
        good_env = values.get("good_env")
        config = with_good_env(load_config(target_dir), Path(good_env) if good_env else None)
        cands = target_candidates(config, target_dir)
        runner = Runner(config, target_dir, cands)
        if same_changes and not _same_changes(values, runner):
            raise ToolError(
                f"the target's changes differ from when session {folder.name} "
                "started: start a new investigation instead"
            )
        ctx = Context(
            runner=runner,
            transcript=Transcript(folder / "transcript.jsonl", echo=echo),
            repo=open_repo(target_repo(config, target_dir)),
            approve=approve,
        )
        session = cls(folder, ctx, saved=values)
        if values.get("session_dir") not in (None, str(folder)):
            # the folder was moved or copied: it goes on where it is now, never writing back
            # to where it was made
            session.update({"session_dir": str(folder)}, as_node=None)
            values["session_dir"] = str(folder)
        return session

    def run(self, value: Any = None) -> Any:
        """From `value` (the first state, a Command answering an interrupt, or None: on from
        the checkpoint) to the end or the next interrupt; LangGraph's output. Its experiments
        reuse their scratch worktrees, each reset to the next state (all removed at the end)."""
        with reused_worktrees():
            return self.graph.invoke(value, self.config, context=self.ctx, durability="sync")

    def run_to_end(self) -> dict:
        """Start (a new session) or go on (a reopened one) to the end; the result object.

        Whatever goes wrong on the way (a tool's error, a bug of ours) still ends with a
        result: status `error`, the traceback in error.txt, the report of what was known."""
        try:
            final = self.run(self.first)
        except Exception as error:  # noqa: BLE001 - never an investigation without a result
            try:
                return self.fail(error)
            except OSError as e:  # not even the report could be written: a full disk
                if e.errno not in STORAGE_ERRORS:
                    raise
                raise ToolError(
                    f"cannot write {e.filename or f'in {self.folder}'}: {e.strerror}; the "
                    "session is kept at its last checkpoint: free some space, then go on with "
                    f"debug-agent investigate --resume {self.folder.name}"
                ) from None
        return final["result"] if isinstance(final, dict) else final.result

    def fail(self, error: BaseException) -> dict:
        """Status `error` with the report of the last checkpoint's state (the checkpoint
        itself is kept: `--resume` goes on from before the error)."""
        return end_with_error(self.current(), self.ctx, error)

    def initial(self) -> InvestigationState:
        """The state the session was started or reopened with."""
        if self.first is not None:
            return self.first
        return InvestigationState.model_validate(self.saved)

    def current(self) -> InvestigationState:
        values = self.graph.get_state(self.config).values
        return InvestigationState.model_validate(values) if values else self.initial()

    def update(self, values: dict, as_node: str | None) -> None:
        self.graph.update_state(self.config, values, as_node=as_node)

    def close(self) -> None:
        self.ctx.runner.close()  # the cluster connection, when experiments ran on one
        self.connection.close()
        self.lock.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _target(
    target_dir: Path, good: str | None, good_env: Path | None = None
) -> tuple[TargetConfig, CandidateSet]:
    """The target's config (with `good` as its good ref and `good_env` as its good package
    set, when given) and its candidates."""
    check_config(target_dir, good, good_env)  # what can be known wrong before a launch fails
    config = with_good_env(load_config(target_dir), good_env)
    if good:
        config.target.good = good
    cands = target_candidates(config, target_dir)
    if not cands.candidates:
        raise ToolError(
            f"no difference between the working tree and the good ref "
            f"{config.target.good!r}: nothing to investigate"
        )
    return config, cands


def _same_changes(values: dict, runner: Runner) -> bool:
    """The saved session's candidates are the target's now: the range's, and, once a bisection
    narrowed the search to a first bad commit, that commit's."""
    saved = [c.id if hasattr(c, "id") else c["id"] for c in values.get("candidates", [])]
    raw = values.get("bisection")
    b = Bisection.model_validate(raw) if isinstance(raw, dict) else raw
    if b is None or not b.narrowed:
        return not saved or saved == [c.id for c in runner.cands.candidates]
    if b.range_ids != [c.id for c in runner.cands.candidates]:
        return False
    return saved == [c.id for c in runner.narrowed(b.parent_sha, b.first_bad.sha).candidates]


def launch_words(config: TargetConfig) -> str:
    """How one launch's value is made, in words: "median of {n} requests"."""
    of = "fastest" if config.bench.per_launch == "best" else "median"
    return f"{of} of {{n}} " + ("samples" if config.bench.kind == "command" else "requests")


def _header(
    session_id: str,
    symptom: Symptom,
    config: TargetConfig,
    cands: CandidateSet,
    lab: str | None,
    options: LLMOptions,
) -> dict:

    return {
        "session": session_id,
        "symptom": symptom.model_dump(),
        "target": {"repo": cands.repo, "good": config.target.good, "good_sha": cands.good_sha},
        # a library target has no server: no ready path or start time-out to speak of
        "config": config.model_dump(
            exclude={"launch": {"command", "ready", "timeout_s"}} if config.bench_only else None
        ),
        "lab": lab,
        "reasoner": f"llm ({options.model})" if options.enabled else "rules",
        "versions": {
            "debug-agent": _version("debug-agent"),
            "python": platform.python_version(),
            "langgraph": _version("langgraph"),
        },
    }


def target_or_seed_lab(
    cwd: Path, lab_dir: Path | None, console: Console
) -> tuple[Path, str | None]:
    """The target configured in `cwd`, or else the built-in seed lab (built in `lab_dir`, or
    a temporary folder); and the lab's name (None for a configured target)."""
    config = cwd / CONFIG_NAME if (cwd / CONFIG_NAME).exists() else at_repo_root(cwd, CONFIG_NAME)
    if config is not None:  # here, or at the root of the repository (run in a subfolder)
        console.print(f"Investigating the target in {escape(visible(str(config)))}.")
        return config.parent, None
    from tools.lab.create import create_lab

    lab = lab_dir or Path(tempfile.mkdtemp(prefix=TEMP_PREFIXES[0])) / "lab"
    console.print(
        f"No {CONFIG_NAME} in {cwd}: investigating the built-in seed lab (built in {lab})."
    )
    create_lab("seed", lab)
    return lab, "seed"


STYLE = {
    "verdict": "bold",
    "hypothesis": "cyan",
    "experiment": "green",
    "thought": "",
    "error": "red",
}
MAX_SHOWN_CHARS = 400  # a terminal line; the transcript keeps the whole text


def console_echo(console: Console) -> Callable[[str, str, str], None]:
    """The transcript's events on the console, as they happen (one line each)."""

    def echo(node: str, kind: str, text: str) -> None:
        if kind in STYLE:
            style = STYLE[kind]
            if len(text) > MAX_SHOWN_CHARS:
                text = (
                    f"{text[:MAX_SHOWN_CHARS]}... ({len(text) - MAX_SHOWN_CHARS} more "
                    "characters in the transcript)"
                )
            text = escape(visible(text))
            console.print(
                f"[dim]{node:>11}[/dim] " + (f"[{style}]{text}[/{style}]" if style else text)
            )

    return echo


def _version(package: str) -> str:
    """The installed distribution's version (langgraph has no __version__ attribute)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "?"
