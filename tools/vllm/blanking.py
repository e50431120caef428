"""Taking code out of what the server can name, line numbers kept: the shared steps of the
rules that blank a branch, a function's body or an import (tools/vllm/platform_branches.py,
tools/vllm/by_arguments.py)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path


def blank(lines: list[str], nodes: list[ast.stmt]) -> None:
    """Empty the lines from the first of `nodes` to the end of the last."""
    if not nodes:
        return
    start, end = nodes[0].lineno, nodes[-1].end_lineno or nodes[-1].lineno
    for n in range(start - 1, min(end, len(lines))):
        lines[n] = ""


def parse_text(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def parsed(
    texts: dict[Path, str], wanted: Callable[[str], object]
) -> Iterator[tuple[Path, str, ast.Module]]:
    """(path, text, tree) of each text `wanted` accepts (a cheap test before the parse) that
    parses."""
    for path, text in texts.items():
        if wanted(text) and (tree := parse_text(text)) is not None:
            yield path, text, tree
