"""What a vLLM server says about itself while it starts, one line at a time.

Each fact keeps the line it came from. Sources (vllm/..., 0.8.5 and 0.34.0; more in
tests/fixtures/vllm_logs/SOURCES.toml): the version (`vLLM API server version`, `vLLM server
version ..., serving model`, the engine line), the arguments (tools.vllm.args), the engine
config, `Resolved architecture:` (the target's first, then a draft's), the attention lines
(tools.vllm.attention), FlashAttention's version, the KV cache, CUDA graphs, torch.compile,
NCCL, the all-reduce backends, the Ray workers' copied environment, a forced `spawn`, unknown
VLLM_* variables, and a V1 feature falling back to V0.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from tools.vllm.args import ENGINE, engine_config, namespace_args, non_default_args
from tools.vllm.attention import AttentionLine, attention_line
from tools.vllm.log_lines import VllmLine


def _number(text: str) -> float | int:
    text = text.replace(",", "")
    return float(text) if "." in text else int(text)


class VllmStartup(BaseModel):
    version: str | None = None
    engine: str | None = None  # "V0" / "V1", from the engine line
    model_runner: str | None = None  # "V2" where the log says "Using V2 Model Runner"
    served_model: str | None = None
    args: dict[str, Any] | None = None
    args_form: str | None = None  # "namespace" (0.8) / "non-default" (0.9+)
    args_line: int | None = None
    config: dict[str, Any] | None = None  # the engine line's VllmConfig text
    config_line: int | None = None
    architectures: list[str] = []  # `Resolved architecture:`: the target's first
    attention: list[AttentionLine] = []
    flash_attn_version: int | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    kv_cache_gib: float | None = None
    cuda_graph_seconds: float | None = None
    cuda_graph_gib: float | None = None
    cuda_graph_modes: list[str] = []  # "mixed prefill-decode, PIECEWISE", "decode, FULL"
    model_loading_gib: float | None = None
    model_loading_seconds: float | None = None
    init_engine_seconds: float | None = None
    torch_compile_seconds: float | None = None
    nccl_version: str | None = None
    all_reduce: list[str] = []
    custom_all_reduce_off: str | None = None  # why vLLM disabled its custom all-reduce
    ray_copied_env: list[str] | None = None  # what 0.8's Ray executor copied to its workers
    ray_copied_env_line: int | None = None
    spawn_forced: int | None = None  # the line where vLLM forced `spawn` for its workers
    unknown_env: list[str] = []  # `Unknown vLLM environment variable detected: X`
    v0_fallback: str | None = None  # the feature that sent a V1 launch to V0
    transformers_backend: bool = False
    processes: list[str] = []

    def decoder_backends(self) -> list[str]:
        """The decoders' attention backends in the order chosen: the target's first."""
        return list(dict.fromkeys(a.backend for a in self.attention if a.kind == "decoder"))


def _set(
    field: str, convert: Callable[[str], Any] = _number, group: int = 1
) -> Callable[..., None]:
    """Sets `field` from the first line that shows it."""

    def apply(facts: VllmStartup, found: re.Match[str], line: VllmLine) -> None:
        if getattr(facts, field) in (None, []):
            setattr(facts, field, convert(found.group(group)))

    return apply


def _pair(first: str, second: str) -> Callable[..., None]:
    def apply(facts: VllmStartup, found: re.Match[str], line: VllmLine) -> None:
        if getattr(facts, first) is None:
            setattr(facts, first, _number(found.group(1)))
            setattr(facts, second, _number(found.group(2)))

    return apply


def _listed(text: str) -> list[str]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return [p.strip(" '\"") for p in text.strip("[] ").split(",") if p.strip(" '\"")]
    return [str(v) for v in value] if isinstance(value, list | tuple) else []


def _version(facts: VllmStartup, found: re.Match[str], line: VllmLine) -> None:
    facts.version = facts.version or found.group(1)
    if found.lastindex and found.lastindex > 1:
        facts.served_model = facts.served_model or found.group(2)


def _architecture(facts: VllmStartup, found: re.Match[str], line: VllmLine) -> None:
    if found.group(1) not in facts.architectures:
        facts.architectures.append(found.group(1))


def _graph_mode(facts: VllmStartup, found: re.Match[str], line: VllmLine) -> None:
    if found.group(1) not in facts.cuda_graph_modes:
        facts.cuda_graph_modes.append(found.group(1))


def _unknown_env(facts: VllmStartup, found: re.Match[str], line: VllmLine) -> None:
    if found.group(1) not in facts.unknown_env:
        facts.unknown_env.append(found.group(1))


def _spawn(facts: VllmStartup, found: re.Match[str], line: VllmLine) -> None:
    facts.spawn_forced = facts.spawn_forced or line.number


def _ray_env(facts: VllmStartup, found: re.Match[str], line: VllmLine) -> None:
    if facts.ray_copied_env is None:
        facts.ray_copied_env = _listed(found.group(1))
        facts.ray_copied_env_line = line.number


def _all_reduce(facts: VllmStartup, found: re.Match[str], line: VllmLine) -> None:
    facts.all_reduce = facts.all_reduce or _listed(found.group(1))


_G = r"(\d[\d,]*(?:\.\d+)?)"  # a number as vLLM prints it
# (a substring every matching line holds, cheap to test first; the pattern; what it sets)
_RULES: list[tuple[str, re.Pattern[str], Callable[..., None]]] = [
    (needle, re.compile(pattern), apply)
    for needle, pattern, apply in [
        ("version", r"vLLM API server version (\S+)", _version),
        ("version", r"vLLM server version (\S+?),? serving model (\S+)", _version),
        ("Resolved", r"Resolved architecture: (\w+)", _architecture),
        ("Model Runner", r"Using (V\d) Model Runner", _set("model_runner", str)),
        (
            "FlashAttention version",
            r"Using FlashAttention version (\d)",
            _set("flash_attn_version"),
        ),
        ("KV cache size", rf"GPU KV cache size: {_G} tokens", _set("kv_cache_tokens")),
        (
            "Maximum concurrency",
            rf"Maximum concurrency for {_G} tokens per request: {_G}x",
            _set("max_concurrency", group=2),
        ),
        ("KV cache memory", rf"Available KV cache memory: {_G} GiB", _set("kv_cache_gib")),
        (
            "Graph capturing",
            rf"Graph capturing finished in {_G} secs?, took {_G} GiB",
            _pair("cuda_graph_seconds", "cuda_graph_gib"),
        ),
        ("Capturing CUDA graph", r"Capturing CUDA graphs? \(([^)]{1,80})\)", _graph_mode),
        (
            "Model loading took",
            rf"Model loading took {_G} GiB(?: memory)? and {_G} s",
            _pair("model_loading_gib", "model_loading_seconds"),
        ),
        (
            "init engine",
            rf"init engine \(profile, create kv cache, warmup model\) took {_G} s",
            _set("init_engine_seconds"),
        ),
        ("torch.compile", rf"torch\.compile (?:takes|took) {_G} s", _set("torch_compile_seconds")),
        ("nccl==", r"vLLM is using nccl==(\S+)", _set("nccl_version", str)),
        ("all-reduce backends", r"Using (\[[^\]]*\]) all-reduce backends", _all_reduce),
        (
            "Custom allreduce is disabled",
            r"Custom allreduce is disabled (?:because )?(.*)",
            _set("custom_all_reduce_off", str),
        ),
        (
            "Copying the following environment",
            r"Copying the following environment variables to workers: (\[.*\])",
            _ray_env,
        ),
        ("spawn", r"We must use the `spawn` multiprocessing start method", _spawn),
        (
            "Unknown vLLM environment",
            r"Unknown vLLM environment variable detected: (\S+)",
            _unknown_env,
        ),
        (
            "Falling back to V0",
            r"^(.{1,200}?) (?:is|are) not supported by the V1 Engine\. Falling back",
            _set("v0_fallback", str),
        ),
    ]
]


class StartupReader:
    """The facts, fed one line at a time (a parse keeps no line it does not need)."""

    def __init__(self) -> None:
        self.facts = VllmStartup()

    def feed(self, line: VllmLine, cut: bool = False) -> None:
        """One line; `cut`: it may have been cut short, so nothing that ends it is a value."""
        facts, message = self.facts, line.message
        if line.process and line.process not in facts.processes and len(facts.processes) < 64:
            facts.processes.append(line.process)
        self._args(line)
        engine = ENGINE.search(message) if "LLM engine" in message else None
        if engine and facts.config is None:
            facts.engine, facts.config_line = f"V{engine.group('engine')}", line.number
            facts.version = facts.version or engine.group("version")
            facts.config = engine_config(message[engine.end() :], cut)
        chosen = attention_line(line.number, line.process, message)
        if chosen is not None and len(facts.attention) < 256:
            facts.attention.append(chosen)
            facts.engine = facts.engine or chosen.engine  # "on V1 engine", where no engine line
        if "Transformers" in message and "backend" in message and "Using Transformers" in message:
            facts.transformers_backend = True
        for needle, pattern, apply in [] if cut else _RULES:
            if needle in message:
                found = pattern.search(message)
                if found:
                    apply(facts, found, line)

    def _args(self, line: VllmLine) -> None:
        if self.facts.args is not None or "args:" not in line.message:
            return
        for form, read in (("namespace", namespace_args), ("non-default", non_default_args)):
            args = read(line.message)
            if args is not None:
                self.facts.args, self.facts.args_form = args, form
                self.facts.args_line = line.number
                return
