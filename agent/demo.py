"""Until the investigation engine lands: measure the symptom on the target, say what is next.

With a debug-agent.toml in the working directory this measures that target's bad state; without
one it builds the seed lab and measures it with and without speculative decoding.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn
from rich.table import Table

from agent.symptom import parse_symptom
from tools.config import CONFIG_NAME, load_config
from tools.measure import Measurement, measure


def _measure_with_progress(console: Console, label: str, config, cwd: Path, log: Path,
                           **kwargs) -> Measurement:
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  MofNCompleteColumn(), console=console, transient=True) as progress:
        task = progress.add_task(f"{label}: launching server", total=config.bench.requests)

        def phase(name: str) -> None:
            if name == "benchmark":
                progress.update(task, description=f"{label}: benchmark")

        def done(n: int, total: int) -> None:
            progress.update(task, completed=n)

        return measure(config, cwd, log, on_phase=phase, on_request=done, **kwargs)


def run_demo(symptom_text: str, cwd: Path, lab_dir: Path | None) -> None:
    from tools.lab.create import create_lab
    from tools.lab.serve import without_speculative

    console = Console(stderr=False)
    symptom = parse_symptom(symptom_text)
    here = cwd / CONFIG_NAME
    if here.exists():
        target = cwd
        console.print(f"Investigating the target in {here}.")
    else:
        target = lab_dir or Path(tempfile.mkdtemp(prefix="debug-agent-seed-lab-"))
        console.print(f"No {CONFIG_NAME} in {cwd}: investigating the built-in seed lab "
                      f"(built in {target}).")
        create_lab("seed", target)
    config = load_config(target)
    logs = target / ".debug-agent-logs"
    runs = [("bad state (working tree)", None)]
    if not here.exists():
        runs.append(("no speculative decoding", without_speculative))
    table = Table(title=f"symptom: {symptom.text}")
    for col in ("run", "verify ms/cycle", "tok/s", "TPOT ms", "accept len", "requests"):
        table.add_column(col, justify="right" if col != "run" else "left")
    for i, (label, transform) in enumerate(runs):
        m = _measure_with_progress(console, label, config, target, logs / f"run{i}.log",
                                   transform_argv=transform)
        metrics = m.bench.metrics

        def cell(name: str, metrics=metrics) -> str:
            return f"{metrics[name].median:.1f}" if name in metrics else "-"

        table.add_row(label, cell("verify_ms"), cell("tok_s"), cell("tpot_ms"),
                      cell("accept_len"), str(len(m.bench.samples)))
    console.print(table)
    console.print("The investigation engine (hypotheses, experiments, verdicts) is not built yet: "
                  "this run only reproduces the symptom. Server logs: " + str(logs))
