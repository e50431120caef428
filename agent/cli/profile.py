"""`debug-agent profile`: one profile of one state, taken by hand.

The state is built as `experiment` builds it (the bad state, the good reference, or either
with candidates reverted or applied), launched once with the import trace and the sampler
on (and, on an SGLang server, its torch profiler), benched, stopped. It prints where that
launch spent its time per unit of the bench, and writes the stacks in the collapsed format that
flamegraph.pl, speedscope and inferno read (`cpu.folded`, `gpu.folded`) beside the logs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent.cli.tools import (
    ApplyOpt,
    ConfigOpt,
    JsonOpt,
    RevertOpt,
    default_metric,
    load_target,
    run_folder,
)
from tools.errors import ToolError

if TYPE_CHECKING:
    from tools.profile.samples import Profile


def _folded(profile: Profile, path: Path) -> str:
    """The profile's stacks as `frame;frame;frame count` lines (count: microseconds)."""
    lines = [
        f"{stack} {max(round(seconds * 1e6), 1)}"
        for stack, seconds in sorted(profile.stacks.items())
    ]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _top(profile: Profile, value: float, higher_is_worse: bool, top: int) -> list[dict]:
    """The functions spending the most self time, as time per unit of the bench."""
    from tools.profile.movers import per_unit

    unit_time = per_unit(value, higher_is_worse)
    own = sorted(profile.functions.items(), key=lambda f: -f[1][1])[:top]
    return [
        {
            "function": name,
            "self_share": spent / profile.seconds,
            "self_per_unit": spent / profile.seconds * unit_time,
            "inclusive_share": inclusive / profile.seconds,
        }
        for name, (inclusive, spent) in own
        if spent > 0
    ]


def profile(
    good: Annotated[
        bool, typer.Option("--good", help="Profile the good reference (default: the bad state).")
    ] = False,
    revert: RevertOpt = [],  # noqa: B006
    apply: ApplyOpt = [],  # noqa: B006
    top: Annotated[int, typer.Option(min=1, help="Functions shown per kind of time.")] = 12,
    metric: Annotated[
        str | None, typer.Option(help="The metric the time is counted per (default: the main one).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Folder for logs and the stacks.")] = None,
    config: ConfigOpt = Path("debug-agent.toml"),
    as_json: JsonOpt = False,
) -> None:
    """Profile one state: launch it once, sampled (and torch-profiled on SGLang), and show
    where its time went per unit of the bench."""
    from agent.cli.tools import checked_metric, split_ids
    from agent.profile.time_moved import KINDS
    from agent.symptom import name_direction, unit_direction
    from tools.experiment import ExperimentOptions, ExperimentSpec, run_experiment
    from tools.profile.movers import time_unit
    from tools.secrets import mask

    target = load_target(config)
    spec = ExperimentSpec(
        base="good" if good else None, reverted=split_ids(revert), applied=split_ids(apply)
    )
    if good and spec.reverted:
        raise ToolError("--revert starts from the bad state; with --good, use --apply")
    target.cands.by_id(spec.reverted + spec.applied)  # unknown ids fail before anything launches
    chosen = checked_metric(metric, target.config) or default_metric(target.config)
    run_dir = run_folder(out, target, "profile")
    options = ExperimentOptions(metric=chosen, trace=True)
    result = mask(run_experiment(target, spec, run_dir, options))
    m, traced = result.metric, result.import_trace
    better = unit_direction(m.unit) or name_direction(m.name)[1] or "lower"
    higher_is_worse = better == "lower"
    label, k = time_unit(m.unit, higher_is_worse)
    out_json: dict = {"metric": m.model_dump(), "log": result.log, "unit": label, "times": {}}
    for key, _, attribute, _ in KINDS:
        found: Profile | None = getattr(traced, attribute, None) if traced else None
        if found is None:
            continue
        out_json["times"][key] = {
            "seconds": found.seconds,
            "samples": found.samples,
            "processes": found.processes,
            "top": _top(found, m.median, higher_is_worse, top),
            "folded": _folded(found, run_dir / f"{key}.folded"),
        }
    out_json["torch_profiler"] = traced.kernels_refused if traced else None
    if as_json:
        typer.echo(json.dumps(out_json, indent=2))
    else:
        _print(out_json, k)
    if not out_json["times"]:
        raise ToolError(
            "no profile: no Python process of the launch wrote one (a launch that is not Python, "
            f"or [profile] turned off); its log: {result.log}"
        )


def _print(found: dict, k: float) -> None:
    from rich.table import Table
    from rich.text import Text

    from agent.views import console
    from tools.visible import visible

    m = found["metric"]
    console.print(
        Text.assemble((m["name"], "bold"), f" {m['median']:.3g} {m['unit']} (one profiled launch)")
    )
    from agent.profile.time_moved import KINDS

    for key, title, _, _ in KINDS:
        times = found["times"].get(key)
        if times is None:
            continue
        table = Table(title=f"{title}: self time, {times['samples']} samples")
        for column in ("function", f"{found['unit']}", "self", "inclusive"):
            table.add_column(column, overflow="fold")
        for row in times["top"]:
            table.add_row(
                visible(row["function"]),  # the console reads no markup: "[kernel] …" is text
                f"{row['self_per_unit'] * k:.3g}",
                f"{row['self_share']:.0%}",
                f"{row['inclusive_share']:.0%}",
            )
        console.print(table)
        console.print(f"  stacks: {visible(times['folded'])}")
    if found["torch_profiler"]:
        console.print(f"  torch profiler: {visible(found['torch_profiler'])}")
    console.print(f"  server log: {visible(found['log'])}")
