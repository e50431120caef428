"""`debug-agent sessions`, `replay` and `report`: review saved investigations."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from agent.transcript import Loaded

DirOpt = Annotated[
    Path | None, typer.Option("--dir", help="The sessions folder (default: ./sessions).")
]

sessions_app = typer.Typer(
    help="Saved sessions.", invoke_without_command=True, rich_markup_mode=None
)


def _root(directory: Path | None) -> Path:
    """The sessions folder; one given with --dir must be one (a typo listed nothing, silently)."""
    from tools.errors import ToolError
    from tools.folders import sessions_root

    if directory is not None and not directory.is_dir():
        what = "is not a folder" if directory.exists() else "does not exist"
        raise ToolError(f"--dir {directory} {what}: give the folder the sessions are kept in")
    return sessions_root(Path.cwd(), None, directory).resolve()


@sessions_app.callback()
def sessions(
    ctx: typer.Context,
    directory: DirOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON list.")] = False,
) -> None:
    """List saved sessions, newest first (a table on a terminal, tab-separated lines with
    whole ids in a pipe)."""
    if ctx.invoked_subcommand is not None:
        return
    import sys

    from agent.sessions import list_sessions

    found = list_sessions(_root(directory))
    if as_json:
        import json

        typer.echo(json.dumps([s.model_dump() for s in found], indent=2))
        return
    if not sys.stdout.isatty():  # grep, cut and scripts want whole ids, one session a line
        for s in found:
            fields = [s.id, s.date, s.status, str(s.launches), s.symptom, s.target]
            typer.echo("\t".join(" ".join(f.split()) for f in fields))
        return
    from rich.console import Console
    from rich.table import Table

    from tools.visible import visible

    table = Table(title=visible(f"sessions in {_root(directory)}"))
    for col in ("id", "date", "target", "symptom", "status", "launches"):
        table.add_column(col, overflow="fold", no_wrap=col == "id")
    for s in found:
        cells = (s.id, s.date, s.target, s.symptom, s.status, str(s.launches))
        table.add_row(*map(visible, cells))
    Console(markup=False, highlight=False).print(table)  # a path with "[/x]" is no markup


@sessions_app.command("prune")
def prune(directory: DirOpt = None) -> None:
    """Remove the checkpoint files of finished sessions (transcripts and reports stay)."""
    from agent.sessions import list_sessions

    freed = 0
    for s in list_sessions(_root(directory)):
        checkpoint = Path(s.path) / "checkpoints.sqlite"
        if s.status not in ("interrupted", "empty") and checkpoint.exists():
            freed += checkpoint.stat().st_size
            checkpoint.unlink()
    typer.echo(f"freed {freed / 1e6:.1f} MB of checkpoints")


def replay(
    session: Annotated[str, typer.Argument(help="A session id (or its folder).")],
    plain: Annotated[
        bool, typer.Option("--plain", help="Everything, unstyled, for pipes.")
    ] = False,
    step: Annotated[bool, typer.Option("--step", help="Wait for Enter between steps.")] = False,
    only: Annotated[str | None, typer.Option(help="hypotheses | experiments | verdicts")] = None,
    at: Annotated[int, typer.Option(min=1, help="Start at step (seq) N.")] = 1,
    rerun: Annotated[
        bool,
        typer.Option(
            "--rerun",
            help="Re-measure its calibration and confirmation here, in a new linked session.",
        ),
    ] = False,
    directory: DirOpt = None,
) -> None:
    """Step through a saved session: reasoning, tool calls, observations, verdicts."""
    if rerun:
        import json

        from agent.rerun import rerun as rerun_session
        from agent.sessions import find_session

        result = rerun_session(
            find_session(session, _root(directory)),
            _root(directory),
            echo=lambda node, kind, text: typer.echo(text, err=True),
        )
        typer.echo(json.dumps(result, indent=2))
        raise typer.Exit(0 if result["holds"] else 3)
    from agent.replay import ONLY
    from agent.replay import plain as print_plain
    from agent.sessions import find_session
    from agent.transcript import read_transcript
    from tools.errors import ToolError

    if only is not None and only not in ONLY:
        raise ToolError(f"--only {only!r}: choose one of {', '.join(ONLY)}")
    loaded = read_transcript(find_session(session, _root(directory)) / "transcript.jsonl")
    if plain:
        print_plain(loaded, only, at)
    else:
        _print_styled(loaded, only, at, step)


def _print_styled(loaded: Loaded, only: str | None, at: int, step: bool) -> None:
    """The replay on a terminal: kinds in colour; `step` waits for Enter after each."""
    from rich.console import Console
    from rich.markup import escape

    from agent.replay import header_lines, steps

    console = Console(highlight=False)
    for line in header_lines(loaded):
        console.print(f"[bold]{escape(line)}[/bold]")
    colour = {"verdict": "bold", "hypothesis": "cyan", "experiment": "green", "error": "red"}
    for s in steps(loaded, only, at):
        style = colour.get(s.kind, "")
        text = f"[{style}]{escape(s.text)}[/{style}]" if style else escape(s.text)
        console.print(f"[dim]{s.seq:>4} {s.node:<11} {s.kind:<11}[/dim] {text}")
        if s.detail:
            console.print(f"[dim]{'':>28}{escape(s.detail)}[/dim]")
        if step:
            try:
                input()
            except EOFError:  # no Enter will come (stdin at its end): the rest at once
                step = False


def report(
    session: Annotated[str, typer.Argument(help="A session id (or its folder).")],
    html: Annotated[
        bool, typer.Option("--html", help="Also write a self-contained HTML page.")
    ] = False,
    directory: DirOpt = None,
) -> None:
    """The session as Markdown (and HTML with a chart of the metric per experiment)."""
    from agent.sessions import find_session

    path = find_session(session, _root(directory))
    if html:
        from agent.report.html_page import write_html

        typer.echo(str(write_html(path)))
    else:
        report_md = path / "report.md"
        if not report_md.exists():
            from tools.errors import ToolError

            raise ToolError(
                f"session {path.name} has no report yet (it did not finish; "
                "resume it with 'debug-agent investigate --resume')"
            )
        typer.echo(report_md.read_text())


def register_session_commands(app: typer.Typer) -> None:
    app.add_typer(sessions_app, name="sessions")
    app.command()(replay)
    app.command()(report)
