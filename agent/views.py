"""Terminal views (rich) of tool results: tables and progress."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn
from rich.table import Table
from rich.text import Text

from tools.experiment import ExperimentResult
from tools.proc.worker_env import WorkerEnv
from tools.repo.candidates import CandidateSet
from tools.visible import visible

# markup off: what is printed is data (file names, log lines, paths), and "[/x]" in a folder's
# name was a MarkupError; control characters are shown by `visible`, never obeyed
console = Console(markup=False, highlight=False)


def candidates_table(cands: CandidateSet) -> None:
    table = Table(title=f"candidates against {cands.good} ({cands.good_sha[:10]})")
    for col in ("id", "kind", "where", "+/-", "origin"):
        table.add_column(col, overflow="fold")
    for c in cands.candidates:
        if c.kind == "hunk":
            where, delta = f"{c.file} {c.header}", f"+{c.added} -{c.removed}"
        else:
            where, delta = f"{c.name}", f"{c.good!r} -> {c.bad!r}"
        table.add_row(*map(visible, (c.id, c.kind, where, delta, c.origin)))
    console.print(table)


class LaunchProgress:
    """One progress line over launches: which launch (of how many, when known), whether its
    server loads or its benchmark runs, and the benchmark's requests done. Without a bar it
    shows nothing. A tools.progress.Progress, for the experiment command and investigations.
    """

    def __init__(
        self,
        bar: Progress | None,
        first: str,
        requests: int | None = None,
        launches: int | None = None,
    ) -> None:
        self.bar = bar
        self.requests = requests  # per launch, when known; else the bar waits for the bench
        self.launches = launches
        self.launch = 0
        self.task = bar.add_task(first, total=requests) if bar is not None else None

    def phase(self, name: str) -> None:
        if self.bar is None or self.task is None:
            return
        if name == "loading":
            self.launch += 1
            self.bar.update(
                self.task,
                description=self._label("server loading"),
                completed=0,
                total=self.requests,
            )
        else:
            self.bar.update(self.task, description=self._label("benchmark"))

    def _label(self, what: str) -> str:
        of = f"/{self.launches}" if self.launches is not None else ""
        return f"launch {self.launch}{of}: {what}"

    def request(self, done: int, total: int) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=done, total=total)


def progress_bar(console: Console) -> Progress:
    """The bar a LaunchProgress draws on (gone once done)."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
    )


@contextmanager
def experiment_progress(enabled: bool, requests: int, launches: int) -> Iterator[LaunchProgress]:
    if not enabled:
        yield LaunchProgress(None, "preparing worktree", requests, launches)
        return
    with progress_bar(Console(stderr=True)) as bar:
        yield LaunchProgress(bar, "preparing worktree", requests, launches)


def experiment_summary(result: ExperimentResult) -> None:
    spec = result.spec
    state = (
        f"reverted {', '.join(spec.reverted)}"
        if spec.reverted
        else f"good + {', '.join(spec.applied)}"
        if spec.applied
        else "the bad state as is"
    )
    m = result.metric
    console.print(
        Text.assemble(
            (m.name, "bold"),
            f" median {m.median:.2f} {m.unit} over {len(m.samples)} samples, "
            f"{result.launches} launch(es) — {visible(state)}",
        )
    )
    values = ", ".join(f"{v:.2f}" for v in m.samples[:16])
    console.print(f"  samples: {values}{' …' if len(m.samples) > 16 else ''}")
    table = Table(title="all metrics (median, pooled over launches)")
    for col in ("metric", "median", "mean", "unit", "source"):
        table.add_column(col)
    for metric in result.metrics.values():
        table.add_row(
            metric.name, f"{metric.median:.2f}", f"{metric.mean:.2f}", metric.unit, metric.source
        )
    console.print(table)
    for line in env_arrival_lines(result.worker_env, prefix="NCCL_"):
        console.print("  " + line)
    console.print(f"  server log: {visible(result.log)}")


def env_arrival_lines(report: WorkerEnv, prefix: str) -> list[str]:
    """One line per variable: its value in each role ("scheduler x8=LL, main=unset")."""
    lines = []
    for name in sorted({k for p in report.processes for k in p.env if k.startswith(prefix)}):
        by_role: dict[tuple[str, str], int] = {}
        for proc in report.processes:
            key = (proc.role, proc.env.get(name, "unset"))
            by_role[key] = by_role.get(key, 0) + 1
        parts = [
            f"{role}{f' x{n}' if n > 1 else ''}={value}"
            for (role, value), n in sorted(by_role.items())
        ]
        lines.append(f"{name}: {', '.join(parts)}")
    return lines


def worker_env_table(report: WorkerEnv, only: list[str]) -> None:
    names = only or sorted({k for p in report.processes for k in p.env})
    table = Table(title=f"environment at start of each process under pid {report.root_pid}")
    table.add_column("pid")
    table.add_column("role")
    for name in names:
        table.add_column(name)
    for proc in report.processes:
        values = [visible(proc.env.get(n, "-")) for n in names]
        table.add_row(str(proc.pid), proc.role, *values)
    console.print(table)
    console.print(f"source: {visible(report.source)}")


SHOWN_ARGS = {
    "sglang": (
        "model_path",
        "attention_backend",
        "speculative_algorithm",
        "tp_size",
        "disable_cuda_graph",
    ),
    "vllm": (
        "model",
        "model_tag",
        "attention_backend",
        "speculative_config",
        "tensor_parallel_size",
    ),
}


def server_line(server: dict) -> str:
    """`server: vllm 0.8.5; architectures ...; attention ...; speculative ...`."""
    parts = [f"server: {server['server']} {server.get('version') or '(version not shown)'}"]
    if server.get("architectures"):
        parts.append(f"architectures {', '.join(server['architectures'])}")
    if server.get("attention"):
        parts.append(f"attention {', '.join(server['attention'])}")
    spec = server.get("speculative")
    if spec:
        parts.append(
            f"speculative {spec.get('method')} (draft {spec.get('draft_model')}, "
            f"{spec.get('num_tokens')} tokens)"
        )
    return "; ".join(parts)


def log_summary(path: object, parsed: dict) -> None:
    args = parsed.get("server_args") or {}
    server = parsed.get("server") or {}
    keys = SHOWN_ARGS["vllm" if server.get("server") == "vllm" else "sglang"]
    console.print(visible(str(path)), style="bold")
    if server.get("server"):
        console.print(visible(server_line(server)))
    shown = [k for k in keys if k in args]
    if args:
        console.print(
            "server_args: "
            + visible(", ".join(f"{k}={args[k]!r}" for k in shown))
            + f" (+{len(args) - len(shown)} more keys)"
        )
    else:
        console.print("server_args: not found")
    decode = parsed.get("decode") or []
    if decode:
        last = decode[-1]
        console.print(
            f"decode lines: {len(decode)}; last: gen throughput "
            f"{last.get('gen_throughput')}, accept len {last.get('accept_len')}, "
            f"cuda graph {last.get('cuda_graph')} (line {last.get('line')})"
        )
    if server.get("server") != "vllm":
        console.print(f"prefill lines: {len(parsed.get('prefill') or [])}")
    for spec in (server.get("details") or {}).get("spec_decode", [])[-1:]:
        definition = spec["definition"] or "definition not known"
        console.print(
            f"spec decode lines: {len(server['details']['spec_decode'])}; last: mean acceptance "
            f"length {spec['mean_acceptance_length']} ({definition}: {spec['how']}; "
            f"line {spec['line']})"
        )
    if parsed.get("bench"):
        console.print(f"bench: {visible(str(parsed['bench']))}")
    for error in (parsed.get("errors") or [])[:10]:
        said = f" line {error['line']} ({error['kind']}): {error['message']}"
        console.print(Text.assemble(("error", "red"), visible(said)))
