"""`debug-agent lab ...`: build, serve and inspect lab targets."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tools.errors import ToolError

lab_app = typer.Typer(help="Lab targets: SGLang-shaped repos with known regressions.",
                      no_args_is_help=True)


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
