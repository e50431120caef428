"""Gather facts: the candidates, and what the bad state's server says about itself.

The first launch of the bad state runs with the import trace; its log gives the resolved
server arguments (and the GPU, where a line shows it), /model_info the architecture, /proc the
workers' environment. When the log does not show the GPU, the node's answer to nvidia-smi (or
ROCm's tools) is used if the caller has it: `tools.gpu.info.query_gpu` over the experiment's node
shell (`Node.shell`, the same on this machine and over SSH).
"""

from __future__ import annotations

from pathlib import Path

from agent.profile.time_moved import mover_line, time_moved
from agent.relevance import Facts, processes_word, untraced
from agent.state import InvestigationState
from agent.views import SHOWN_ARGS, server_line
from tools.experiment import ExperimentResult
from tools.gpu.info import GpuInfo
from tools.gpu.log import gpu_from_log
from tools.server_facts import ServerFacts
from tools.server_log import parse_server_log
from tools.stack.requires import requirements


def gather_facts(state: InvestigationState, bad: ExperimentResult, good: ExperimentResult) -> None:
    """The facts of the two traced references, and where the time moved between them."""
    state.facts = facts_from(bad, node_gpu=bad.gpu, good=good)
    state.facts.movers = time_moved(state)


def facts_from(
    result: ExperimentResult,
    node_gpu: GpuInfo | None = None,
    good: ExperimentResult | None = None,
) -> Facts:
    """`node_gpu`: what the experiment's node said, used when the log shows no GPU; `good`:
    the good reference's traced launch (what it imported judges the files the bad state
    deleted)."""
    log = Path(result.log)
    text = log.read_text(errors="replace")  # read once: the parse and the GPU lines use it
    parsed = parse_server_log(text)  # SGLang's or vLLM's reader, as the log tells
    server = parsed.server or ServerFacts()
    # the target's first (/model_info, else the log's: SGLang's first `Load weight end`,
    # vLLM's first `Resolved architecture:`), then a draft's
    named = (result.model_info or {}).get("architectures")  # a server's word: names, or not
    served = [a for a in named if isinstance(a, str)] if isinstance(named, list) else []
    architectures = list(dict.fromkeys([*served, *server.architectures]))
    facts = Facts(
        server=server,
        server_args=parsed.server_args,
        server_args_line=server.args_line,
        architectures=architectures,
        trace=result.import_trace,
        workers=result.worker_env,
        gpu=gpu_from_log(text, f"server log {log.name}") or node_gpu,
    )
    if good is not None:
        facts.good_trace = good.import_trace
    for side, launched in (("bad", result), ("good", good)):
        if launched is not None and launched.environment is not None:
            facts.requires[side] = requirements(Path(launched.environment.folder))
    return facts


def measured_elsewhere(state: InvestigationState) -> str | None:
    """Why no configuration would be measured as built, or None: the references loaded changed
    files from the user's own checkout (on the path: an editable install), which is the bad
    state whatever the scratch tree holds."""
    facts = state.facts
    traces = [t for t in (facts.trace, facts.good_trace) if t is not None] if facts else []
    loaded = {path: where for t in traces for path, where in t.from_checkout.items()}
    if not loaded:
        return None
    shown = "; ".join(f"{path} from {where}" for path, where in list(loaded.items())[:3])
    return (
        f"the references loaded changed files from your checkout, not from the scratch tree "
        f"({shown}): every configuration would run the same code. Put the tree first on the "
        'import path: PYTHONPATH in [launch] env (a relative entry, such as "src", is the '
        "scratch tree's)"
    )


def shadowed(facts: Facts | None) -> list[str]:
    """Changed files the bad state read from another copy (an installed package, the user's
    checkout), each a sentence: their changes were not measured."""
    if facts is None or facts.trace is None:
        return []
    copies = [*facts.trace.elsewhere.items()]
    copies += [(path, "your checkout") for path in facts.trace.opens.in_checkout]
    return [
        f"{path} was read from {where}, not from the scratch tree: its changes there are "
        "not measured"
        for path, where in copies
    ]


def describe(state: InvestigationState) -> list[str]:
    """The gathered facts as sentences for the transcript."""
    facts = state.facts
    if facts is None:
        return []
    lines = []
    server = facts.server.model_dump() if facts.server else {}
    if server.get("server"):
        lines.append(server_line(server))
    args = facts.server_args or {}
    if args:
        keys = SHOWN_ARGS["vllm" if server.get("server") == "vllm" else "sglang"]
        shown = ", ".join(f"{k}={args[k]!r}" for k in keys if k in args)
        lines.append(f"server log line {facts.server_args_line}: {shown}")
    if facts.architectures:
        lines.append(f"model architecture: {facts.architectures[0]}")
    if facts.gpu:
        lines.append(f"GPU: {facts.gpu.describe()} ({facts.gpu.source})")
    if facts.trace:
        lines.append(
            f"import trace: {len(facts.trace.files)} source files loaded by "
            f"{facts.trace.processes} processes"
        )
        if not facts.trace.processes:
            lines.append(
                "import trace: no Python process reported (a command that sets PYTHONPATH "
                "itself leaves the trace's hook out: set it in [launch] env): no file is "
                "dropped as never imported"
            )
        lines += [f"import trace: {line}" for line in shadowed(facts)[:5]]
        if missing := untraced(facts):
            lines.append(
                f"import trace: Python processes {', '.join(map(str, missing[:5]))} left no "
                "report (started isolated, or with an environment of their own): no file is "
                "dropped as never imported"
            )
    lines += _time_moved(state)
    if facts.workers:
        roles: dict[str, int] = {}
        for proc in facts.workers.processes:
            roles[proc.role] = roles.get(proc.role, 0) + 1
        lines.append(f"{processes_word(facts)}: " + ", ".join(f"{n} {r}" for r, n in roles.items()))
    return lines


def _time_moved(state: InvestigationState) -> list[str]:
    """The profiles' top movers (self time) of each kind, or why there are none."""
    facts = state.facts
    assert facts is not None
    if facts.trace is None:
        return []
    traces = [t for t in (facts.trace, facts.good_trace) if t is not None]
    lines = []
    if facts.trace.kernels_refused:  # said once: the torch profiler is not tried again
        lines.append(
            f"torch profiler: {facts.trace.kernels_refused}: no GPU traces (the sampler's "
            "CPU profile only)"
        )
    sampled = any(t.profile is not None and t.profile.seconds for t in traces)
    if not sampled:
        lines.append(
            "profile: no process sampled the target's own code at work (no Python process "
            "reported, or its time is spent outside Python): no profile priors"
        )
    worse = state.worse == "higher"
    for source, words in (("sampled", "self time"), ("gpu", "GPU time, torch profiler")):
        own = [m for m in facts.movers if m.kind == "self" and m.source == source]
        lines += [
            f"where the time moved: {mover_line(m, state.unit, worse)} ({words})" for m in own[:3]
        ]
    if sampled and not any(m.kind == "self" for m in facts.movers):
        lines.append("profile: no function's time per unit moved beyond the sampling's error")
    return lines
