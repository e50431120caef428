"""The top-level statements an edit touches, cut out of a module with and without the edit.

Outside those statements both versions of the module are the same text, and a top-level
statement ends with no bracket, string or block left open, so the two modules parse to the same
tree, and compile alike, exactly when the two slices do. Parsing a slice instead of the module
makes the per-hunk tests cheap on 2,000-line files (werkzeug's 1.0 -> 2.0 range re-parsed whole
modules 1,800 times). Two things tie statements together for the compiler: a `from __future__`
import must lead the module (an edit at or above the last one is not sliced), and a module-level
`global` must precede the name's uses (a module holding one is not sliced).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from functools import lru_cache

from tools.python_ast import parse_module

# (first line, line count, the lines that replace them); a count of 0 inserts after `first`
Edit = tuple[int, int, Sequence[str]]
Span = tuple[int, int]  # first and last line of a top-level statement, decorators included
Module = tuple[tuple[Span, ...], int] | None  # statement_spans' answer


@lru_cache(maxsize=64)
def statement_spans(source: str) -> Module:
    """Each top-level statement's lines, and the last line of the module's `from __future__`
    imports (0: none); None where the module does not parse or holds a module-level `global`."""
    try:
        tree = parse_module(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    spans, future_end = [], 0
    for node in tree.body:
        if isinstance(node, ast.Global):
            return None
        decorators = getattr(node, "decorator_list", [])
        first = min([node.lineno] + [d.lineno for d in decorators])
        spans.append((first, node.end_lineno or node.lineno))
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            future_end = spans[-1][1]
    return tuple(spans), future_end


def _bounds(first: int, count: int) -> Span:
    """The lines an edit touches; an insertion touches the lines on both sides of it."""
    return (first, first + count - 1) if count else (max(first, 1), first + 1)


def module_of(lines: Sequence[str]) -> Module:
    """statement_spans of the module these lines make."""
    return statement_spans("\n".join(lines) + "\n")


def touched_slices(lines: Sequence[str], edits: Sequence[Edit]) -> tuple[str, str] | None:
    """The module's top-level statements that `edits` touch (one run of lines, from the first
    touched to the last), as text without and with the edits; None where the module cannot be
    sliced. Where a statement comes before the run, both start with `pass`, so that a string at
    their head is a statement, as it is in the module, never a docstring."""
    return slice_with(lines, edits, module_of(lines))


def slice_with(
    lines: Sequence[str], edits: Sequence[Edit], module: Module
) -> tuple[str, str] | None:
    """touched_slices, with the lines' module_of kept by the caller (many edits of one file)."""
    if module is None or not edits:
        return None
    spans, future_end = module
    bounds = [_bounds(first, count) for first, count, _ in edits]
    low, high = min(b[0] for b in bounds), max(b[1] for b in bounds)
    if low <= future_end:
        return None
    touched = [(a, b) for a, b in spans if a <= high and b >= low]
    first = min([low] + [a for a, _ in touched])
    last = min(max([high] + [b for _, b in touched]), len(lines))
    out: list[str] = []
    at = first - 1  # the next line (0-based) not yet copied
    for start, count, new in sorted(edits, key=lambda e: e[0]):
        index = start - 1 if count else start
        out += lines[at:index]
        out += new
        at = index + count
    out += lines[at:last]
    head = "pass\n" if spans and spans[0][0] < first else ""
    before = head + "\n".join(lines[first - 1 : last]) + "\n"
    return before, head + "\n".join(out) + "\n"
