"""The models a server runs and the attention backends each one builds, from its log.

A server with speculative decoding runs two models: the target and the draft (EAGLE, EAGLE3,
or an MTP/NextN head), each in its own model runner with its own attention backend. Each is
read from what the log shows, in this order:

- the architecture: SGLang's `Load weight end. ... type=<class>` lines, one per model runner,
  the target's first; where the draft's line is missing, its name from the draft's own config
  (`speculative_draft_model_path` when that folder is readable here) or, for a draft loaded from
  the target's checkpoint, the target's architecture as the release renames it for a draft
  (tools/code_paths/architectures.py);
- the attention backends: the server_args dump (`attention_backend`, prefill and decode), then
  the lines SGLang prints when it changes one after the dump ("Setting attention backend to
  triton."); the draft's from `speculative_draft_attention_backend` or "Overriding draft
  attention backend to fa3.", else the target's.

What cannot be read stays None: a draft whose architecture is unknown keeps every model file
from being called off-path.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from tools.code_paths.architectures import ArchitectureFacts
from tools.json_text import parse_json

TARGET_KEYS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")
DRAFT_KEY = "speculative_draft_attention_backend"
NO_DRAFT_MODEL = {"NGRAM", "LOOKAHEAD"}  # speculative algorithms that load no draft model

_LOADED = re.compile(r"Load weight end\..*?\btype=(\w+)")
_TARGET_SET = re.compile(  # what SGLang prints where it picks or changes the backend
    r"(?:Setting attention backend to|Attention backend not (?:explicitly )?specified\. Use"
    r"|Double sparsity optimization is turned on\. Use|MLA optimization is turned on\. Use)"
    r" (\w+)"
)
_DRAFT_SET = re.compile(r"Overriding draft attention backend to (\w+)")


class Serving(BaseModel):
    role: Literal["target", "draft"]
    architecture: str | None
    backends: list[str]
    mla: bool | None  # whether the release gives this architecture MLA attention
    evidence: list[str]


def _lines(text: str, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    return [
        (number, found.group(1))
        for number, row in enumerate(text.splitlines(), 1)
        if (found := pattern.search(row))
    ]


def loaded_architectures(text: str) -> list[str]:
    """The model classes the log's model runners loaded, in order: the target's first."""
    return list(dict.fromkeys(name for _, name in _lines(text, _LOADED)))


def _target_backends(args: dict, args_line: int | None, text: str) -> tuple[list[str], list[str]]:
    dumped = [str(args[k]) for k in TARGET_KEYS if args.get(k) not in (None, "")]
    evidence = [f"the log's server_args has {k}={args[k]!r}" for k in TARGET_KEYS if args.get(k)]
    later = [(n, b) for n, b in _lines(text, _TARGET_SET) if args_line is None or n > args_line]
    if later:
        line, backend = later[-1]
        evidence.append(f"log line {line} sets the attention backend to {backend} after the dump")
        return [backend], evidence
    return list(dict.fromkeys(dumped)), evidence


def _draft_architecture(
    args: dict, loaded: list[tuple[int, str]], facts: ArchitectureFacts, target: str | None
) -> tuple[str | None, list[str]]:
    classes = list(dict.fromkeys(name for _, name in loaded))  # one line per rank, per runner
    if len(classes) > 1:
        line = next(n for n, name in loaded if name == classes[1])
        return classes[1], [f"log line {line}: the draft model runner loaded {classes[1]}"]
    path, model = args.get("speculative_draft_model_path"), args.get("model_path")
    config = Path(str(path)) / "config.json" if path else None
    if config is not None and config.is_file():
        try:
            named = parse_json(config.read_text())["architectures"][0]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            named = None
        if isinstance(named, str):
            renamed = facts.draft_renames.get(named, named)
            loaded_as = f", loaded as {renamed}" if renamed != named else ""
            return renamed, [f"{config} names {named}{loaded_as}"]
    if target and (path in (None, model)) and target in facts.draft_renames:
        renamed = facts.draft_renames[target]
        return renamed, [
            f"the draft comes from the target's checkpoint ({target}); the release's model config "
            f"loads it as {renamed}"
        ]
    return None, [
        "the draft model's architecture is not in the log (no second `Load weight end` line)"
    ]


def _draft_backends(args: dict, text: str, target: list[str]) -> tuple[list[str], list[str]]:
    overrides = _lines(text, _DRAFT_SET)
    if overrides:
        line, backend = overrides[-1]
        return [backend], [f"log line {line}: the draft's attention backend is {backend}"]
    if args.get(DRAFT_KEY):
        value = str(args[DRAFT_KEY])
        return [value], [f"the log's server_args has {DRAFT_KEY}={value!r}"]
    return target, ["no draft attention backend set: the draft builds the target's"]


def read_servings(
    args: dict, args_line: int | None, text: str, facts: ArchitectureFacts, target: str | None
) -> list[Serving]:
    """The target, then the draft when the server decodes speculatively with a draft model."""
    loaded = _lines(text, _LOADED)
    if target is None and loaded:
        target = loaded[0][1]
    backends, said = _target_backends(args, args_line, text)
    servings = [
        Serving(
            role="target",
            architecture=target,
            backends=backends,
            mla=facts.is_mla(target),
            evidence=said,
        )
    ]
    algorithm = str(args.get("speculative_algorithm") or "").upper()
    if not algorithm or algorithm in ("NONE",) or algorithm in NO_DRAFT_MODEL:
        return servings
    draft, why = _draft_architecture(args, loaded, facts, target)
    chosen, how = _draft_backends(args, text, backends)
    servings.append(
        Serving(
            role="draft",
            architecture=draft,
            backends=chosen,
            mla=facts.is_mla(draft),
            evidence=[f"speculative_algorithm={algorithm}", *why, *how],
        )
    )
    return servings


HTTP_SERVER = "srt/entrypoints/http_server.py"
# lines only SGLang's HTTP server prints: the main process of `launch_server` or `sglang serve`
# ran it (an Engine in a user's script prints server_args too, and none of these)
_HTTP_LINES = re.compile(
    r"The server is fired up and ready to roll!|Uvicorn running on |Application startup complete"
)


def http_server_root(pkg: Path, log_text: str) -> dict[Path, str]:
    """The HTTP server's module, a root when the log shows the HTTP server ran."""
    found = _HTTP_LINES.search(log_text)
    if found is None or not (pkg / HTTP_SERVER).is_file():
        return {}
    number = log_text.count("\n", 0, found.start()) + 1
    return {
        pkg / HTTP_SERVER: f"the HTTP server, which the log shows ran (line {number}: "
        f"{found.group(0)!r})"
    }


# a logging call that prints the arguments as the log shows them: `server_args=ServerArgs(...)`
_PRINTS_ARGS = re.compile(
    r"""\b(?:logger|logging|log)\.\w+\(\s*f["'](?:\{server_args=\}|server_args=\{)"""
)
_ARGS_LINE = re.compile(r"\bserver_args=\w*\(")


def args_printer_root(pkg: Path, log_text: str, texts: dict[str, str]) -> dict[Path, str]:
    """The module that prints the log's `server_args=` line, a root: it ran. Only where one
    module of the server's code (`texts`: package path -> text, tests left out) prints it; a
    release with two (0.5.9: the engine and the gRPC scheduler launcher) says nothing."""
    shown = _ARGS_LINE.search(log_text)
    if shown is None:
        return {}
    printers = [
        (rel, text.count("\n", 0, found.start()) + 1)
        for rel, text in texts.items()
        if "server_args=" in text and (found := _PRINTS_ARGS.search(text))
    ]
    if len(printers) != 1:
        return {}
    rel, line = printers[0]
    number = log_text.count("\n", 0, shown.start()) + 1
    return {
        pkg / rel: f"it printed the log's server_args line (line {number}), at {rel}:{line}, "
        "the only module of the package that prints it"
    }
