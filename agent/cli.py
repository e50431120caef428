"""The `debug-agent` command line. Heavy modules are imported inside the commands that use them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from tools.errors import ToolError

app = typer.Typer(
    help="Finds what made an LLM server slower, by experiment, and writes down why.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
lab_app = typer.Typer(help="Lab targets: SGLang-shaped repos with known regressions.",
                      no_args_is_help=True)
app.add_typer(lab_app, name="lab")


@app.command()
def investigate(
    symptom: Annotated[str, typer.Option(help='What got worse, e.g. "verify 29ms".')],
    lab_dir: Annotated[Path | None, typer.Option(
        help="Where to build the seed lab when there is no debug-agent.toml here "
             "(default: a temporary folder).")] = None,
) -> None:
    """Investigate a slowdown of the target in ./debug-agent.toml (or of the built-in seed lab)."""
    from agent.demo import run_demo

    run_demo(symptom, Path.cwd(), lab_dir)


@lab_app.command("create")
def lab_create(
    kind: Annotated[str, typer.Argument(help="seed | random")],
    directory: Annotated[Path, typer.Argument(help="A new or empty folder.")],
    seed: Annotated[int | None, typer.Option(help="Scenario seed (random labs).")] = None,
    noise: Annotated[float | None, typer.Option(
        help="Coefficient of variation of each forward's time (default 0.02).")] = None,
) -> None:
    """Build a lab: good state committed, the scenario's changes left uncommitted."""
    from tools.lab.create import create_lab

    info = create_lab(kind, directory, seed=seed, noise=noise)
    typer.echo(f"created {info.kind} lab in {info.path}: {info.changes} uncommitted change(s); "
               f"config {info.config}")


@lab_app.command("serve")
def lab_serve(
    directory: Annotated[Path, typer.Argument(help="A lab folder.")],
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 30000,
    no_spec: Annotated[bool, typer.Option("--no-spec", help="Serve without speculative "
                                          "decoding.")] = False,
) -> None:
    """Run the lab's SGLang command line in the foreground (Ctrl-C stops every process)."""
    from tools.lab.serve import lab_command, serve_lab
    from tools.server import port_in_use

    if port_in_use(port):
        raise ToolError(f"port {port} is already in use on 127.0.0.1")
    argv, _ = lab_command(directory, port, no_spec)
    typer.echo("$ " + " ".join(argv), err=True)
    raise typer.Exit(serve_lab(directory, port, no_spec))


@lab_app.command("truth")
def lab_truth(directory: Annotated[Path, typer.Argument(help="A lab folder.")]) -> None:
    """Print a lab's ground truth as JSON (kept outside the lab, never read by the agent)."""
    from tools.lab.truth import load_truth

    typer.echo(load_truth(directory).model_dump_json(indent=2))


def main() -> None:
    try:
        app()
    except ToolError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
