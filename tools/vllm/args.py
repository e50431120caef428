"""The arguments a vLLM server logs at startup, read as Python reprs (never as JSON):

- 0.8: `args: Namespace(model='...', tensor_parallel_size=2, ...)`, every argparse field;
- 0.9+: `non-default args: {'model': '...', 'tensor_parallel_size': 2}`, only what differs from
  the defaults (api_key and hf_token redacted by vLLM);
- every release: the body of `Initializing a V<n> LLM engine (v<version>) with config: ...`,
  VllmConfig's flat `k=v, ` list with reprs such as `torch.bfloat16` and
  `SpeculativeConfig(method='eagle3', model='...', num_spec_tokens=3)`.

Values that are not literals (`<class ...>`, `torch.bfloat16`) are kept as their text. A line cut
short keeps the key it was cut in with a null value: a number cut short is never read.
"""

from __future__ import annotations

import ast
import contextlib
import re
from typing import Any

from tools.json_text import parse_json
from tools.sglang.server_args_repr import ReprScanner, by_items, split_item, to_json, whole_repr

NAMESPACE = re.compile(r"\bargs: Namespace\(")
NON_DEFAULT = re.compile(r"\bnon-default args: \{")
ENGINE = re.compile(
    r"Initializing an? V(?P<engine>\d) LLM engine \(v(?P<version>[^)\s]+)\) with config: "
)
# The items that end VllmConfig's text (V1: compilation_config; V0 adds use_cached_outputs):
# a body ending in one of them, closed, was not cut.
_LAST_ITEMS = ("compilation_config", "use_cached_outputs")
_SPECULATIVE = re.compile(r"SpeculativeConfig\((?P<inner>[^()]*)\)")


def _read(text: str, closer: str, call: bool) -> dict[str, Any]:
    scanner = ReprScanner(closer)
    scanner.feed(text)
    if scanner.closed:
        whole = whole_repr("".join(scanner.inner), call)
        return whole if whole is not None else by_items(scanner.items, "", call)
    return by_items(scanner.items, scanner.tail, call)


def namespace_args(message: str) -> dict[str, Any] | None:
    """`args: Namespace(...)` (0.8): every field."""
    found = NAMESPACE.search(message)
    return _read(message[found.end() :], ")", call=True) if found else None


def non_default_args(message: str) -> dict[str, Any] | None:
    """`non-default args: {...}` (0.9+): the fields that differ from the defaults."""
    found = NON_DEFAULT.search(message)
    return _read(message[found.end() :], "}", call=False) if found else None


def engine_config(body: str, cut: bool = False) -> dict[str, Any]:
    """VllmConfig's text: `k=v, k=v`. The last item counts only where it is one that ends the
    text and it closed, on a line that was not cut (a body cut inside it keeps the key with a
    null value)."""
    scanner = ReprScanner(")")
    scanner.feed(body)
    tail = scanner.tail.strip()
    key = tail.split("=", 1)[0].strip()
    if key in _LAST_ITEMS and not scanner.stack and not scanner.quote and not cut:
        scanner.feed(")")  # VllmConfig's text ended here: read the last item as a whole one
    config: dict[str, Any] = {}
    for item in scanner.items[:4096]:
        pair = split_item(item, call=True)
        if pair and pair[1].strip():
            config.setdefault(pair[0], _config_value(pair[1].strip()))
    pair = split_item(scanner.tail, call=True) if not scanner.closed else None
    if pair:
        config.setdefault(pair[0], None)  # the item the line was cut in
    return config


def _config_value(text: str) -> Any:
    """VllmConfig prints some values with %s, not %r: `quantization=compressed-tensors`,
    `dtype=torch.bfloat16`, compilation_config as JSON. A literal is read as one; a config's
    repr as a dict; JSON as JSON; anything else is kept as printed."""
    with contextlib.suppress(ValueError, SyntaxError, MemoryError, RecursionError):
        return to_json(ast.literal_eval(text))
    if text.startswith("{"):
        with contextlib.suppress(ValueError):
            return parse_json(text)
    if _SPECULATIVE.fullmatch(text):
        return speculative_config(text)
    return text


def speculative_config(value: Any) -> dict[str, Any] | None:
    """`SpeculativeConfig(method=..., model=..., num_spec_tokens=N)` (read by the repr reader
    into a dict), the `--speculative-config` JSON (a dict, or its text), or None."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or value in ("", "None"):
        return None
    found = _SPECULATIVE.search(value)
    if found:
        return _read(found.group("inner") + ")", ")", call=True)
    if value.lstrip().startswith("{"):
        with contextlib.suppress(ValueError):
            parsed = parse_json(value)  # `--speculative-config` is JSON: null, true
            return parsed if isinstance(parsed, dict) else None
        return _read(value.lstrip()[1:], "}", call=False)
    return None
