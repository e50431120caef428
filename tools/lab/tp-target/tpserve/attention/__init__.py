"""Attention backends by name; a backend's module is imported only when it is selected."""

from __future__ import annotations

import importlib
from collections.abc import Callable

BACKENDS = {"sdpa": "tpserve.attention.sdpa", "flash": "tpserve.attention.flash"}


def get_backend(name: str) -> Callable:
    if name not in BACKENDS:
        raise ValueError(f"unknown attention backend {name!r}; known: {', '.join(BACKENDS)}")
    return importlib.import_module(BACKENDS[name]).attention
