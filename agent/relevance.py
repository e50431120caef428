"""Relevance without a launch: is a candidate on the execution path of the bad state?

Evidence, strongest first: the import trace (a file no server process imported cannot matter,
nor a package none of whose modules or shared libraries any process loaded),
what a hunk changes (a comment-only hunk changes nothing), the branch a hunk sits in (a branch
for another model architecture, or under a GPU guard that is false on the server's GPU, is
never taken), and whether the env vars a hunk sets ever reach the worker processes. Each
verdict carries the evidence quoted, for the transcript and report.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel

from agent.comment_only import comment_only
from tools.code_paths.dependencies import file_change
from tools.code_paths.enclosing import Branch, enclosing_branches
from tools.code_paths.imports import source_lookup
from tools.gpu.guards import decide
from tools.gpu.info import GpuInfo
from tools.proc.import_trace import ImportTrace
from tools.proc.worker_env import WorkerEnv
from tools.profile.movers import Mover
from tools.python_ast import parse_module
from tools.repo.candidates import ENV_SET, Candidate
from tools.secrets import fingerprint, mask
from tools.server_facts import ServerFacts

NEVER_LOADED = "package never loaded"
# a model class name: Llama / Ernie4_5_Moe ... For ... CausalLM / CausalLMEagle3
_ARCH = re.compile(r"""["']([A-Z][A-Za-z0-9_]*For[A-Z][A-Za-z0-9_]+)["']""")


class Facts(BaseModel):
    """What the bad state's server showed about itself."""

    server: ServerFacts | None = None  # which server, and what its log says of itself
    server_args: dict | None = None
    server_args_line: int | None = None
    architectures: list[str] = []
    trace: ImportTrace | None = None
    good_trace: ImportTrace | None = None  # the good reference's: judges files the bad deleted
    # a [stack]'s references: each installed distribution's requirements, by side ("bad",
    # "good"): where one package's release pins another (tools/stack/requires.py)
    requires: dict[str, dict[str, list[str]]] = {}
    workers: WorkerEnv | None = None
    gpu: GpuInfo | None = None  # from the server log, else the node (None: guards undecided)
    # where the time moved between the traced references' profiles (agent/profile)
    movers: list[Mover] = []


def processes_word(facts: Facts) -> str:
    """ "server processes" where the log told a server; a command bench's are "processes"."""
    told = facts.server is not None and facts.server.server is not None
    return "server processes" if told else "processes"


def untraced(facts: Facts) -> list[int]:
    """The server's Python processes that left no import report (started with -I or -S, or
    with an environment of their own): the trace does not say what they imported."""
    if facts.trace is None or facts.workers is None:
        return []
    reported = set(facts.trace.pids)
    return [p.pid for p in facts.workers.processes if p.python and p.pid not in reported]


class Relevance(BaseModel):
    candidate: str
    on_path: bool | None  # None: no evidence either way
    reason: str
    evidence: list[str]
    prior_factor: float = 1.0  # weak evidence, short of a verdict: it scales the prior


def _args_quote(facts: Facts, *keys: str) -> list[str]:
    quotes = []
    for key in keys:
        if facts.server_args and key in facts.server_args:
            where = f" (server log line {facts.server_args_line})" if facts.server_args_line else ""
            quotes.append(f"server_args {key}={facts.server_args[key]!r}{where}")
    return quotes


def _not_imported(c: Candidate, facts: Facts) -> Relevance | None:
    """A file no server process imported. A file the bad state deleted cannot be imported
    there: it is judged by what the good reference imported, and kept without that trace."""
    deleted = c.kind == "hunk" and file_change(c) == "deleted"
    trace, state = (facts.good_trace, "good reference") if deleted else (facts.trace, "bad state")
    if trace is None or not trace.processes or not (c.file or "").endswith(".py"):
        return None
    if not deleted and untraced(facts):  # what those imported is unknown: nothing is dropped
        return None
    if trace.imported(c.file or ""):
        return None
    what = f"{c.file}, which the bad state deleted," if deleted else c.file
    evidence = [
        f"{what} was not imported by any of the {trace.processes} {processes_word(facts)} "
        f"(import trace of the {state})"
    ]
    evidence += _args_quote(facts, "attention_backend", "model_path")
    if facts.architectures:
        evidence.append(f"model architecture {facts.architectures[0]} (/model_info)")
    return Relevance(candidate=c.id, on_path=False, reason="file never imported", evidence=evidence)


def _not_opened(c: Candidate, facts: Facts) -> Relevance | None:
    """A changed data file no process opened while the launch ran was not read. Only a file
    whose contents changed is dropped: an added or deleted one may matter by its existence
    alone, which no open shows, so it is only searched last."""
    if (
        c.kind != "hunk"
        or not c.file
        or c.file.endswith(".py")
        or (c.header or "").startswith("mode")
    ):
        return None
    change = file_change(c)
    trace, state = (facts.good_trace, "good") if change == "deleted" else (facts.trace, "bad")
    if trace is None:
        return None
    opens = trace.opens
    if c.file not in opens.watched_set or c.file in opens.read_set:
        return None  # not watched, opened, or read in the user's checkout (gather says so)
    # the watch must have seen the launch's opens: each watched file it imported was opened
    # (not so when the launch ran elsewhere, on a shared file system, say)
    controls = trace.open_controls
    if not controls:
        return None
    evidence = [
        f"{c.file} was not opened by any process while the {state} state ran (inotify watch "
        f"on its scratch tree, from before the launch to after the benchmark, which saw "
        f"{controls[0]}, loaded by the launch, opened)"
    ]
    if change == "modified":
        return Relevance(
            candidate=c.id, on_path=False, reason="file never opened", evidence=evidence
        )
    return Relevance(
        candidate=c.id,
        on_path=None,
        reason=f"{change} but never opened while the {state} state ran (its existence alone "
        "could matter)",
        evidence=evidence,
        prior_factor=EXISTENCE_FACTOR,
    )


EXISTENCE_FACTOR = 0.2  # a file added or deleted, never opened: only its existence can matter


@lru_cache(maxsize=32)
def _parsed(text: str) -> ast.Module | None:
    try:
        return parse_module(text)
    except (SyntaxError, ValueError):
        return None


def _branches(c: Candidate, bad_source: list[str]) -> tuple[int, list[Branch]] | None:
    """The hunk's first changed line and the branches around it in the bad file."""
    first = _first_changed_line(c)
    if first is None or not bad_source or first > len(bad_source):
        return None
    tree = _parsed("\n".join(bad_source) + "\n")
    return (first, enclosing_branches(tree, bad_source, first)) if tree else None


def _first_changed_line(c: Candidate) -> int | None:
    """Line number, in the bad file, of the hunk's first added line."""
    line = c.new_start()
    if line is None:
        return None
    for row in c.body_lines():
        if row.startswith("+"):
            return line
        if not row.startswith("-"):
            line += 1
    return None


def _draft_unknown(facts: Facts) -> bool:
    """A speculative server whose draft model's architecture the log does not show: a branch
    for another architecture may be the draft's."""
    algorithm = str((facts.server_args or {}).get("speculative_algorithm") or "").upper()
    return algorithm not in ("", "NONE", "NGRAM", "LOOKAHEAD") and len(facts.architectures) < 2


def _other_architecture(c: Candidate, facts: Facts, bad_source: list[str]) -> Relevance | None:
    python = (c.file or "").endswith(".py")  # a non-Python file's branches are not read
    known = facts.architectures and not _draft_unknown(facts)
    found = _branches(c, bad_source) if known and python else None
    if found is None:
        return None
    line, branches = found
    for branch in branches:
        named = _ARCH.findall(branch.header)
        if branch.taken and named and not set(named) & set(facts.architectures):
            return Relevance(
                candidate=c.id,
                on_path=False,
                reason="branch for another model architecture",
                evidence=[
                    f"{c.file}:{line} sits under `{branch.header}`",
                    f"the server runs {' and the draft '.join(facts.architectures[:2])}"
                    " (/model_info, the log's `Load weight end` lines)",
                    *_args_quote(facts, "model_path"),
                ],
            )
    return None


def _other_gpu(
    c: Candidate, facts: Facts, bad_source: list[str], root: Path | None
) -> Relevance | None:
    """A hunk under a GPU guard that is false on the server's GPU never runs there."""
    gpu = facts.gpu
    found = _branches(c, bad_source) if gpu and (c.file or "").endswith(".py") else None
    if gpu is None or not found:
        return None
    lookup = source_lookup(
        "\n".join(bad_source) + "\n", root / (c.file or "") if root else None, root
    )
    for branch in found[1]:
        decision = decide(branch.test, lookup, gpu)
        if decision.value is None or decision.value == branch.taken:
            continue
        where = "under" if branch.taken else "in the else branch of"
        return Relevance(
            candidate=c.id,
            on_path=False,
            reason="branch for another GPU",
            evidence=[
                f"{c.file}:{found[0]} sits {where} `{branch.header}` (line {branch.line})",
                *decision.notes,
                f"`{ast.unparse(branch.test)}` is {decision.value} on the "
                f"server's GPU, {gpu.describe()} ({gpu.source})",
            ],
        )
    return None


def _comment_only(c: Candidate, good_source: str | None) -> Relevance | None:
    evidence = comment_only(c, good_source)
    if evidence is None:
        return None
    return Relevance(
        candidate=c.id, on_path=False, reason="comment or docstring only", evidence=evidence
    )


def _only_env_lines(c: Candidate) -> bool:
    code = [a for a in (row.strip() for row in c.added_lines()) if a and not a.startswith("#")]
    return bool(code) and all(ENV_SET.search(a) for a in code)


def env_arrival(name: str, value: str, workers: WorkerEnv) -> tuple[int, int, str] | None:
    """(processes that read NAME and have NAME=value, those processes, what they are); None
    when NAME was not read from the workers at all (then "unset" would be a guess). NCCL reads
    its variables in the GPU workers: where a cluster or a pool started such workers (vLLM's
    Ray executor), those count; otherwise the scheduler processes, else every process."""
    if not workers.recorded(name):
        return None
    gpu_workers = [p for p in workers.processes if p.role == "gpu_worker"]
    schedulers = [p for p in workers.processes if p.role == "scheduler"]
    readers, who = (
        (gpu_workers, "GPU worker processes")
        if name.startswith("NCCL_") and gpu_workers
        else (schedulers, "scheduler processes")
        if schedulers
        else (workers.processes, "processes")
    )
    print_, masked_value = fingerprint(value), mask({name: value})[name]
    got = sum(
        # compared before masking; a record from before fingerprints, as it was masked
        (p.fingerprint(name) == print_) if p.fingerprints else p.env.get(name) == masked_value
        for p in readers
    )
    return got, len(readers), who


def _env_never_arrives(c: Candidate, facts: Facts) -> Relevance | None:
    if facts.workers is None:
        return None
    if c.kind == "env" and c.name and c.bad is not None:
        pairs = [(c.name, c.bad)]
    elif c.kind == "hunk" and (c.file or "").endswith(".py") and _only_env_lines(c):
        if not facts.workers.after_start:  # the hunk may run in a worker after it started,
            return None  # where the start environment (/proc) cannot show what it set
        pairs = c.env_assignments()
    else:
        return None
    for name, value in pairs:
        arrival = env_arrival(name, value, facts.workers)
        if arrival is None or arrival[0]:
            return None  # it arrived somewhere, or nobody looked
    evidence = []
    for name, value in pairs:
        seen = ", ".join(
            f"{p.role} {p.pid}: {p.env.get(name, 'unset')}" for p in facts.workers.processes[:3]
        )
        evidence.append(f"{name}={value} is set but no worker process has it ({seen}, ...)")
    return Relevance(
        candidate=c.id, on_path=False, reason="env var set but never arrived", evidence=evidence
    )


def ray_copy_note(name: str, facts: Facts) -> str | None:
    """What the server's log says of a variable's way to Ray workers (vLLM 0.8's executor
    copies only the VLLM_* names it knows, and says which): a note for the evidence, never a
    drop by itself: workers started from a cluster launched with that environment, or code
    that sets it inside a worker, still get it."""
    startup = (facts.server.details.get("startup") or {}) if facts.server else {}
    copied, line = startup.get("ray_copied_env"), startup.get("ray_copied_env_line")
    if copied is None or name in copied:
        return None
    return (
        f"the server log (line {line}) shows its Ray executor copying only {copied} to the "
        f"workers: a {name} the server's own process sets does not reach them that way"
    )


def _package_never_loaded(c: Candidate, facts: Facts) -> Relevance | None:
    """A package change no launch could have run: no process of either reference whose set
    holds it loaded a module or a shared library of it (tools/stack/loaded.py)."""
    if c.kind != "package" or not c.name or untraced(facts):
        return None
    evidence = []
    for trace, side, pin in ((facts.trace, "bad", c.bad), (facts.good_trace, "good", c.good)):
        if pin is None:
            continue  # not in that side's set
        if trace is None or trace.distributions is None or not trace.processes:
            return None
        if c.name in trace.distributions:
            return None
        evidence.append(
            f"no process of the {side} reference loaded a module or shared library of {c.name} "
            f"{pin} (import trace of {trace.processes} processes, which loaded "
            f"{len(trace.distributions)} distributions of its environment)"
        )
    return Relevance(candidate=c.id, on_path=False, reason=NEVER_LOADED, evidence=evidence)


def assess(
    c: Candidate,
    facts: Facts,
    good_source: str | None,
    bad_source: list[str],
    root: Path | None = None,
) -> Relevance:
    """`root`: the bad state's repository, so guards can follow names to other modules."""
    for check in (
        lambda: _package_never_loaded(c, facts),
        lambda: _not_imported(c, facts),
        lambda: _not_opened(c, facts),
        lambda: _comment_only(c, good_source),
        lambda: _other_architecture(c, facts, bad_source),
        lambda: _other_gpu(c, facts, bad_source, root),
        lambda: _env_never_arrives(c, facts),
    ):
        try:
            verdict = check()
        except RecursionError:  # a source nested deeper than its readers follow: no evidence
            verdict = None
        if verdict is not None:
            return verdict
    return Relevance(candidate=c.id, on_path=None, reason="no evidence against it", evidence=[])
