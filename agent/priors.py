"""The rules reasoner's priors: how plausibly each candidate touches the symptom.

Weights, not probabilities of a model: the search splits candidates by their mass, so only the
ratios matter. The reasons are kept for the transcript.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from tools.repo.candidates import Candidate

# symptom metric -> (path words, changed-code words) that point at its code path
PATHS = {
    "verify_ms": (
        (
            "distributed",
            "speculative",
            "eagle",
            "attention",
            "model_runner",
            "cuda_graph",
            "communicator",
            "nccl",
            "models/",
        ),
        (
            "all_reduce",
            "allreduce",
            "nccl",
            "verify",
            "draft",
            "spec",
            "cuda_graph",
            "graph",
            "attn",
            "attention",
            "extend",
            "forward",
            "launch",
            "backend",
        ),
    ),
    "tpot_ms": (
        (
            "distributed",
            "attention",
            "model_runner",
            "cuda_graph",
            "communicator",
            "models/",
            "scheduler",
        ),
        (
            "all_reduce",
            "allreduce",
            "nccl",
            "decode",
            "cuda_graph",
            "graph",
            "attn",
            "forward",
            "backend",
        ),
    ),
    "ttft_ms": (
        ("attention", "model_runner", "scheduler", "models/", "tokenizer"),
        ("prefill", "extend", "chunk", "attn", "forward", "backend"),
    ),
}
_NUMBER = re.compile(r"\d+\.\d+|\b\d+\b")
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")
_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
_LOG_CALL = re.compile(r"^\s*(logger|logging|log)\.\w+\(|^\s*print\(")
_BUILTINS = {
    "range",
    "len",
    "enumerate",
    "zip",
    "list",
    "dict",
    "set",
    "tuple",
    "sorted",
    "min",
    "max",
    "sum",
    "any",
    "all",
    "int",
    "float",
    "str",
    "bool",
    "isinstance",
    "reversed",
}
# NCCL variables that only change what NCCL logs, never how it communicates
LOGGING_ONLY_ENV = {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "SGLANG_LOG_LEVEL"}


class Prior(BaseModel):
    candidate: str
    weight: float
    reasons: list[str]


def _code(lines: list[str]) -> list[str]:
    """The lines that hold code: neither blank nor a comment."""
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def _changed(c: Candidate) -> list[str]:
    return _code(c.changed_lines())


def _in_effect(c: Candidate, server_args: dict | None) -> list[str]:
    """Values this hunk writes that the bad state's resolved server_args show in effect."""
    if not server_args:
        return []
    added = " ".join(c.added_lines())
    literals = {m.strip("'\"") for m in _STRING.findall(added)}
    return sorted(
        f"{key}={value!r}"
        for key, value in server_args.items()
        if isinstance(value, str) and len(value) >= 4 and value in literals
    )


# packages whose releases change what kernels run and how (names, or parts of them)
RUNTIME_PACKAGES = ("torch", "triton", "flashinfer", "sgl-kernel", "nccl", "cuda", "cudnn", "vllm")


def prior(c: Candidate, metric: str, server_args: dict | None = None) -> Prior:
    path_words, code_words = PATHS.get(metric, ((), ()))
    weight, reasons = 1.0, []
    if c.kind == "env":
        if c.name in LOGGING_ONLY_ENV:
            weight, reasons = 0.2, [f"{c.name} only changes logging"]
        elif (c.name or "").startswith(("NCCL_", "SGLANG_", "CUDA_", "TORCH_")):
            weight, reasons = 3.0, [f"{c.name} tunes the server's runtime"]
        return Prior(candidate=c.id, weight=weight, reasons=reasons)
    if c.kind == "arg":
        return Prior(candidate=c.id, weight=3.0, reasons=[f"server arg {c.name} changed"])
    if c.kind == "package":
        kernels = any(word in (c.name or "") for word in RUNTIME_PACKAGES)
        why = f"package {c.name} {c.good or '(none)'} -> {c.bad or '(removed)'}"
        if kernels:
            return Prior(candidate=c.id, weight=3.0, reasons=[why, "it holds kernels or runtime"])
        return Prior(candidate=c.id, weight=1.0, reasons=[why])
    path = (c.file or "").lower()
    hits = [w for w in path_words if w in path]
    if hits:
        weight *= 3.0
        reasons.append(f"path on the {metric} code path ({', '.join(hits)})")
    code = " ".join(_changed(c)).lower()
    words = sorted({w for w in code_words if w in code})
    if words:
        weight *= 2.0
        reasons.append(f"changed code mentions {', '.join(words)}")
    in_effect = _in_effect(c, server_args)
    if in_effect:
        weight *= 4.0
        reasons.append(f"writes a value the server runs with ({', '.join(in_effect)})")
    changed = _changed(c)
    if changed and all(_LOG_CALL.search(line) for line in changed):
        weight *= 0.2
        reasons.append("only logging calls change")
    elif _looks_like_refactor(c):
        weight *= 0.3
        reasons.append("looks like a refactor: the same calls and constants, rearranged")
    elif _sets_only_logging_env(c):
        weight *= 0.2
        reasons.append("only sets variables that change logging")
    elif any(_NUMBER.search(line) for line in changed):
        weight *= 1.5
        reasons.append("changes numbers or conditions")
    if not metric or metric == "tok_s":  # throughput: anything on the path can matter
        weight = max(weight, 1.0)
    return Prior(candidate=c.id, weight=weight, reasons=reasons or ["no specific signal"])


def _tokens(lines: list[str]) -> tuple[list[str], list[str], set[str]]:
    code = " ".join(lines)
    strings = sorted(_STRING.findall(code))
    numbers = sorted(_NUMBER.findall(_STRING.sub("", code)))
    calls = set(_CALL.findall(_STRING.sub("", code))) - _BUILTINS
    return strings, numbers, calls


def _looks_like_refactor(c: Candidate) -> bool:
    removed = _code(c.removed_lines())
    added = _code(c.added_lines())
    return bool(removed and added) and _tokens(removed) == _tokens(added)


def _sets_only_logging_env(c: Candidate) -> bool:

    names = {name for name, _ in c.env_assignments()}
    return bool(names) and names <= LOGGING_ONLY_ENV
