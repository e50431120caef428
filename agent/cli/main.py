"""The `debug-agent` command line. Heavy modules are imported inside the commands that use them."""

from __future__ import annotations

import math
import shutil
import signal
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from agent.cli.lab import lab_app
from agent.cli.sessions import register_session_commands
from agent.cli.tools import register_tool_commands
from tools.errors import PATH_ERRORS, STORAGE_ERRORS, ToolError
from tools.limits import MAX_COUNT, MAX_SECONDS
from tools.repo.outer_git import forget_outer_repository
from tools.visible import visible

app = typer.Typer(
    help="Finds what made an LLM server slower, by experiment, and writes down why.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,  # help texts name config sections such as [budget] literally
)
app.add_typer(lab_app, name="lab")
register_tool_commands(app)
register_session_commands(app)


SymptomOpt = Annotated[
    str | None,
    typer.Option(help='What got worse, e.g. "verify 29ms" (default: the config\'s [symptom]).'),
]
ResumeOpt = Annotated[
    str | None,
    typer.Option(
        help="Continue a killed session (its id); with --max-launches, also one its budget stopped."
    ),
]
GoodOpt = Annotated[str | None, typer.Option(help="Known-good git ref (default: the config's).")]
GoodEnvOpt = Annotated[
    Path | None,
    typer.Option(
        "--good-env",
        help="The known-good package set (pip freeze, requirements, uv.lock, pylock.toml); "
        "the bad one is [stack] bad, else what {python} has installed now.",
    ),
]
MaxLaunchesOpt = Annotated[
    int | None,
    typer.Option(min=2, max=MAX_COUNT, help="Budget: server launches (default: [budget] or 40)."),
]


def _check_budgets(max_minutes: float | None, max_llm_cost: float | None) -> None:
    """A budget is a finite number above 0 (0, -5, nan and inf each meant something else), and
    a wall time one a clock can wait for."""
    for option, value, most in (
        ("--max-minutes", max_minutes, MAX_SECONDS / 60),
        ("--max-llm-cost", max_llm_cost, math.inf),
    ):
        if value is not None and not (math.isfinite(value) and 0 < value <= most):
            upto = f" and at most {most:g}" if math.isfinite(most) else ""
            raise ToolError(f"{option} {value:g} is not a budget: give a number above 0{upto}")


MaxMinutesOpt = Annotated[
    float | None, typer.Option(help="Budget: wall time (default: [budget] or 60).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result object last.")]
LabDirOpt = Annotated[
    Path | None,
    typer.Option(
        help="Where to build the seed lab when there is no debug-agent.toml here "
        "(default: a temporary folder)."
    ),
]
LLMBaseURLOpt = Annotated[
    str | None,
    typer.Option(help="An OpenAI-compatible endpoint for the LLM reasoner (or OPENAI_BASE_URL)."),
]
LLMModelOpt = Annotated[str | None, typer.Option(help="Its model; enables the LLM reasoner.")]
MaxLLMCallsOpt = Annotated[
    int | None, typer.Option(min=1, max=MAX_COUNT, help="Budget: model calls.")
]
MaxLLMCostOpt = Annotated[float | None, typer.Option(help="Budget: model cost in USD.")]
LLMReplayOpt = Annotated[
    str | None,
    typer.Option(help="Play back the model answers of a saved session (no endpoint needed)."),
]


@app.command()
def investigate(
    symptom: SymptomOpt = None,
    resume: ResumeOpt = None,
    good: GoodOpt = None,
    good_env: GoodEnvOpt = None,
    max_launches: MaxLaunchesOpt = None,
    max_minutes: MaxMinutesOpt = None,
    as_json: JsonOpt = False,
    lab_dir: LabDirOpt = None,
    llm_base_url: LLMBaseURLOpt = None,
    llm_model: LLMModelOpt = None,
    max_llm_calls: MaxLLMCallsOpt = None,
    max_llm_cost: MaxLLMCostOpt = None,
    llm_replay: LLMReplayOpt = None,
) -> None:
    """Investigate a slowdown of the target in ./debug-agent.toml (or of the built-in seed lab)."""
    from agent.investigate import investigate as run

    _check_budgets(max_minutes=max_minutes, max_llm_cost=max_llm_cost)
    if resume:
        from agent.investigate import resume as resume_session
        from agent.sessions import find_session
        from tools.folders import sessions_root

        folder = find_session(resume, sessions_root(Path.cwd(), None))
        _exit_on_error(resume_session(folder, as_json, max_launches, max_minutes))
        return
    from agent.llm.options import LLMOptions

    replay = None
    if llm_replay:
        from agent.sessions import find_session
        from tools.folders import sessions_root

        replay = find_session(llm_replay, sessions_root(Path.cwd(), None))
    result = run(
        symptom,
        Path.cwd(),
        good,
        max_launches,
        max_minutes,
        as_json,
        lab_dir,
        LLMOptions(
            base_url=llm_base_url,
            model=llm_model,
            max_calls=max_llm_calls,
            max_cost=max_llm_cost,
            replay=replay,
        ),
        good_env=good_env.absolute() if good_env else None,  # a pipe resolves to no path
    )
    _exit_on_error(result)


def _exit_on_error(result: dict) -> None:
    """An investigation that ended in error (its report written) exits non-zero."""
    if result.get("status") == "error":
        raise typer.Exit(1)


@app.command()
def chat(
    symptom: SymptomOpt = None,
    resume: Annotated[str | None, typer.Option(help="Continue any saved session (its id).")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Launch without asking.")] = False,
    lab_dir: Annotated[
        Path | None,
        typer.Option(help="Where to build the seed lab when there is no debug-agent.toml here."),
    ] = None,
    llm_base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint.")] = None,
    llm_model: Annotated[str | None, typer.Option(help="Its model: free text in the chat.")] = None,
) -> None:
    """An interactive investigation: slash commands, approval before every launch."""
    from agent.chat import chat as run_chat
    from agent.llm.options import LLMOptions

    run_chat(symptom, yes, lab_dir, resume, LLMOptions(base_url=llm_base_url, model=llm_model))


def _exit_on_signal(signum: int, frame: object) -> None:
    # unwinds like Ctrl-C: servers stopped, worktrees removed; SIGHUP is the terminal or the
    # SSH connection gone, which before ended the process where it stood
    raise SystemExit(128 + signum)


def main() -> None:
    signal.signal(signal.SIGTERM, _exit_on_signal)
    signal.signal(signal.SIGHUP, _exit_on_signal)
    _closed_streams_to_null()
    _readable_width()
    try:
        forget_outer_repository()  # run from a hook: the calling git's index is not ours
        app()
    except ToolError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except OSError as e:
        if e.errno in PATH_ERRORS and e.filename is not None:
            print(f"error: {_shown(str(e.filename))}: {e.strerror}", file=sys.stderr)
        elif e.errno in STORAGE_ERRORS:
            print(f"error: cannot write {e.filename or 'a file'}: {e.strerror}", file=sys.stderr)
        else:
            _internal_error(e)
        sys.exit(1)
    except Exception as e:
        if "git" in sys.modules and isinstance(e, sys.modules["git"].GitCommandError):
            from tools.repo.git_failure import git_failure

            print(f"error: {visible(git_failure(e))}", file=sys.stderr)
            sys.exit(1)
        if shutil.which("git") is None:  # GitPython refuses to load without it
            print(
                "error: git is not on PATH: debug-agent reads and builds every state with git; "
                "install it (Debian: apt-get install git) or put it on PATH",
                file=sys.stderr,
            )
            sys.exit(1)
        _internal_error(e)


def _closed_streams_to_null() -> None:
    """Started with a standard stream closed (`>&-`, `<&-`, some daemons), Python leaves it
    None and every isatty() was an internal error: a closed stdin reads as empty, as /dev/null
    does, and output goes nowhere, as print() alone would do."""
    import os

    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))  # noqa: SIM115


def _readable_width(least: int = 20) -> None:
    """COLUMNS=0 (some CI runners set it) made every table print nothing at all, and a width
    of a few columns one letter a line: below `least`, the terminal's own width (or 80)."""
    import os

    columns = os.environ.get("COLUMNS", "")
    if columns and not (columns.isdecimal() and int(columns) >= least):
        del os.environ["COLUMNS"]


def _shown(name: str, most: int = 120) -> str:
    """A path the user gave, fit for one line: control characters shown, the middle cut."""
    name = visible(name)
    return name if len(name) <= most else f"{name[: most // 2]}…{name[-most // 2 :]}"


def _internal_error(e: Exception) -> NoReturn:
    """A bug of ours: one line here, the traceback in a file (where the state folder allows)."""
    import traceback

    from tools.folders import state_dir

    path = state_dir() / "last-error.txt"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(traceback.format_exc(), encoding="utf-8", errors="replace")
        where = f"traceback in {path}"
    except OSError:
        where = "no traceback kept: the state folder is not writable"
    print(f"error: internal error {type(e).__name__}: {e} ({where})", file=sys.stderr)
    sys.exit(2)
