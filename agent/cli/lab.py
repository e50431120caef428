"""`debug-agent lab ...`: build, serve and inspect lab targets."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tools.errors import ToolError
from tools.json_text import model_json
from tools.limits import MAX_COUNT

lab_app = typer.Typer(
    help="Lab targets: SGLang-shaped repos with known regressions.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _shapes_help() -> str:
    from tools.lab.shape_help import SHAPE_HELP

    return (
        "Transformers labs: verify (default) or acceptance. Random labs: force the scenario's "
        "shape (seed 1 unless --seed). "
        + "; ".join(f"{name}: {line}" for name, line in SHAPE_HELP.items())
    )


@lab_app.command("create")
def lab_create(
    kind: Annotated[
        str,
        typer.Argument(
            help="seed | random | range (a history of commits after a good tag) | "
            "transformers (a copy of the "
            "installed transformers) | tp (2 ranks; torch); with --scenario it may be left "
            "out (random)"
        ),
    ],
    directory: Annotated[
        Path | None, typer.Argument(help="A new or empty folder.", show_default=False)
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Scenario seed (random and range labs; a stack variant).")
    ] = None,
    commits: Annotated[
        int | None, typer.Option(help="Range labs: commits after the good tag (default 30).")
    ] = None,
    noise: Annotated[
        float | None,
        typer.Option(
            help="Coefficient of variation of each forward's time (default 0.02; the "
            "small-gap shape brings its own)."
        ),
    ] = None,
    scenario: Annotated[str | None, typer.Option(help=_shapes_help())] = None,
    flaky_start: Annotated[
        bool | None,
        typer.Option(
            "--flaky-start/--steady-start",
            help="Random labs: one launch in five fails at start-up (the same launches every "
            "time), or none does (default: as the seed draws).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Build a lab: good state committed, the scenario's changes left uncommitted."""
    from tools.lab.create import create_lab

    if directory is None:
        if scenario is None and flaky_start is None:
            raise ToolError("'lab create' needs KIND DIR (or --scenario NAME DIR)")
        kind, directory = "random", Path(kind)
    info = create_lab(
        kind, directory, seed=seed, noise=noise, shape=scenario, flaky=flaky_start, commits=commits
    )
    what = {
        "range": f"{commits or 30} commits after the good tag",
        "stack": f"{info.changes} packages upgraded between its two package sets",
    }.get(info.kind, f"{info.changes} uncommitted change(s)")
    typer.echo(f"created {info.kind} lab in {info.path}: {what}; config {info.config}")


@lab_app.command("serve")
def lab_serve(
    directory: Annotated[Path, typer.Argument(help="A lab folder.")],
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 30000,
    no_spec: Annotated[
        bool, typer.Option("--no-spec", help="Serve without speculative decoding.")
    ] = False,
) -> None:
    """Run the lab's SGLang command line in the foreground (Ctrl-C stops every process)."""
    from tools.lab.serve import lab_command, serve_lab
    from tools.proc.server import port_in_use

    if port_in_use(port):
        raise ToolError(f"port {port} is already in use on 127.0.0.1")
    argv, _ = lab_command(directory, port, no_spec)
    typer.echo("$ " + " ".join(argv), err=True)
    raise typer.Exit(serve_lab(directory, port, no_spec))


@lab_app.command("truth")
def lab_truth(directory: Annotated[Path, typer.Argument(help="A lab folder.")]) -> None:
    """Print a lab's ground truth as JSON (kept outside the lab, never read by the agent)."""
    from tools.lab.truth import load_truth

    typer.echo(model_json(load_truth(directory)))


def _score_line(s, ranges: bool, slots: int) -> str:  # s: agent.bench.lab.ScenarioScore
    said = f"seed {s.seed} {s.scenario}: {s.outcome} ({s.status}, {s.launches} launches; "
    if s.scenario.startswith("stack"):
        return said + f"bisection over the packages, releases and hunks {s.bisect_launches})"
    return (
        said
        + f"bisect {s.bisect_launches}, ddmin {s.ddmin_launches}"
        + (f", commit bisect + ddmin inside {s.range_baseline})" if ranges else ")")
        + (
            f"; {s.rounds} rounds of {slots}; serially {s.serial_outcome}, "
            f"{s.serial_launches} launches"
            if slots > 1
            else ""
        )
    )


ScenariosOpt = Annotated[
    int, typer.Option(min=1, max=MAX_COUNT, help="How many generated scenarios.")
]


@lab_app.command("bench")
def lab_bench(
    scenarios: ScenariosOpt = 30,
    seed: Annotated[int, typer.Option(help="Seed of the first scenario (then seed+1, ...).")] = 1,
    noise: Annotated[
        float | None,
        typer.Option(help="Coefficient of variation of each forward's time (default 0.02)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    ranges: Annotated[
        bool,
        typer.Option(
            "--ranges",
            help="Range labs (30 commits after a good tag): scored on the commit and the hunk, "
            "beside git bisect over the commits plus ddmin inside the culprit commit.",
        ),
    ] = False,
    stack: Annotated[
        bool,
        typer.Option(
            "--stack",
            help="Variants of the stack lab (real PyPI releases, real timings; the wheels "
            "downloaded once): scored on the package, its first slow release and the hunk, "
            "beside a bisection over the packages, the releases and the release's hunks.",
        ),
    ] = False,
    slots: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="Experiments at once, as tasks on a local Ray (needs the ray extra); each "
            "scenario also runs serially, beside it.",
        ),
    ] = 1,
    profiles: Annotated[
        bool, typer.Option(help="Profile the traced references, or not (to compare).")
    ] = True,
) -> None:
    """Run the engine on generated scenarios; compare with the truth, git bisect and ddmin."""
    import json

    if stack and (ranges or slots > 1 or noise is not None):
        raise ToolError(
            "lab bench --stack runs real timings, one experiment at a time: "
            "it takes no --ranges, --slots or --noise"
        )
    scores, summary = _scores(scenarios, seed, noise, as_json, ranges, stack, slots, profiles)
    if as_json:
        report = {"scenarios": [s.model_dump() for s in scores], "summary": summary}
        typer.echo(json.dumps(report, indent=2))
        return
    _print_bench(
        scores,
        summary,
        f"{scenarios} stack variants from seed {seed}, real timings"
        if stack
        else f"{scenarios} scenarios from seed {seed}, noise CV "
        f"{noise if noise is not None else 0.02:g}",
    )


def _scores(
    scenarios: int,
    seed: int,
    noise: float | None,
    quiet: bool,
    ranges: bool,
    stack: bool,
    slots: int,
    profiles: bool = True,
) -> tuple[list, dict]:
    """The bench's scenarios scored, each said on stderr as it ends (unless `quiet`)."""
    from rich.console import Console

    console = Console(stderr=True)

    def progress(s) -> None:
        console.print(_score_line(s, ranges, slots))

    if stack:
        from agent.bench.stack import run_stack_bench

        return run_stack_bench(scenarios, seed, None if quiet else progress)
    from agent.bench.lab import run_bench

    return run_bench(
        scenarios,
        seed,
        noise,
        None if quiet else progress,
        ranges=ranges,
        slots=slots,
        profiles=profiles,
    )


def _print_bench(scores: list, summary: dict, title: str) -> None:
    """The bench's table on the terminal: one row per scenario, then the summary."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    columns = ("seed", "scenario", "cands", "outcome", "status", "launches", "search", "bisect")
    for col in (*columns, "ddmin"):
        table.add_column(col)
    for s in scores:
        table.add_row(
            str(s.seed),
            s.scenario,
            str(s.candidates),
            s.outcome,
            s.status,
            str(s.launches),
            str(s.search_launches),
            str(s.bisect_launches),
            str(s.ddmin_launches),
        )
    Console().print(table)
    Console().print(summary)
