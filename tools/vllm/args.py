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

import contextlib
import json
import re
from typing import Any

from tools.sglang.server_args_repr import ReprScanner, by_items, whole_repr

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


def engine_config(body: str) -> dict[str, Any]:
    """VllmConfig's text: `k=v, k=v`. The last item counts only where it is one that ends the
    text and it closed (a body cut inside it keeps the key with a null value)."""
    scanner = ReprScanner(")")
    scanner.feed(body)
    tail = scanner.tail.strip()
    key = tail.split("=", 1)[0].strip()
    if key in _LAST_ITEMS and not scanner.stack and not scanner.quote:
        scanner.feed(")")  # VllmConfig's text ended here: read the last item as a whole one
        return _json_values(by_items(scanner.items, "", call=True), scanner.items)
    return _json_values(by_items(scanner.items, scanner.tail, call=True), scanner.items)


def _json_values(config: dict[str, Any], items: list[str]) -> dict[str, Any]:
    """compilation_config is printed as JSON (`true`, `null`), not as a Python repr."""
    for item in items:
        key, _, value = item.partition("=")
        if key.strip() == "compilation_config" and value.strip().startswith("{"):
            with contextlib.suppress(ValueError):
                config["compilation_config"] = json.loads(value)
    return config


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
        return _read(value.lstrip()[1:], "}", call=False)
    return None
