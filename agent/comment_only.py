"""Whether a hunk changes only comments or docstrings: the module's syntax tree, docstrings
left out, is the same with and without it.

Parsing a large module twice per hunk is the cost of a release range (hundreds of hunks in the
files a launch imported), so a cheap test goes first and settles most hunks the safe way: a
hunk whose touched lines are none of a docstring's and whose code (comments stripped) differs
changes code, and is not parsed at all. Every other hunk gets the exact test. A hunk the cheap
test calls code is only ever kept as a candidate, never dropped, so it cannot cost a culprit.

The exact test parses only the top-level statements the hunk touches, with and without it
(tools/code_paths/statement_slices.py): re-parsing whole 2,000-line modules per hunk cost 14 s of
werkzeug's 1.0 -> 2.0 range.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from tools.code_paths.statement_slices import touched_slices
from tools.python_ast import parse_module
from tools.repo.candidates import Candidate

_TRAILING_COMMENT = re.compile(r"\s+#.*$")


def _docstring_of(node: ast.AST) -> ast.Expr | None:
    """The docstring opening a module, class or function body, if it has one."""
    body = getattr(node, "body", None)
    first = body[0] if isinstance(body, list) and body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


@lru_cache(maxsize=32)
def _code_of(source: str) -> str:
    """The module's syntax tree without docstrings, dumped (cached: every hunk of a file
    compares with the same good source)."""
    tree = parse_module(source)
    for node in ast.walk(tree):
        if _docstring_of(node) is not None:
            node.body[0] = ast.Pass()  # type: ignore[attr-defined]
    return ast.dump(tree)


@lru_cache(maxsize=32)
def _docstring_lines(source: str) -> frozenset[int]:
    """The line numbers a docstring of `source` spans."""
    return frozenset(
        n
        for node in ast.walk(parse_module(source))
        if (doc := _docstring_of(node)) is not None
        for n in range(doc.lineno, (doc.end_lineno or doc.lineno) + 1)
    )


def _code(line: str) -> str:
    """A line's code: blank for a comment or a blank line; a trailing comment cut where the
    line holds no quote that could hide a `#`."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return ""
    return stripped if "'" in stripped or '"' in stripped else _TRAILING_COMMENT.sub("", stripped)


def changes_code(c: Candidate, source: str, start: int, length: int) -> bool:
    """True when the hunk surely changes code: it touches no docstring line and its code
    lines differ. False means: parse to tell."""
    touched = range(start, start + length) if length else (start, start + 1)
    if any(n in _docstring_lines(source) for n in touched):
        return False
    lines = source.splitlines()
    removed = [_code(line) for line in lines[start - 1 : start - 1 + length]]
    added = [_code(line) for line in c.new_lines()]
    return [r for r in removed if r] != [a for a in added if a]


def apply_hunk(source: str, c: Candidate) -> str:
    lines = source.splitlines(keepends=True)
    start, length = c.old_range() or (1, 1)
    new = [line + "\n" for line in c.new_lines()]
    index = start - 1 if length else start
    return "".join(lines[:index] + new + lines[index + length :])


def comment_only(c: Candidate, good_source: str | None) -> list[str] | None:
    """The evidence that the hunk changes only comments or docstrings, or None."""
    old = c.old_range()
    if good_source is None or old is None or not (c.file or "").endswith(".py"):
        return None
    try:
        if changes_code(c, good_source, *old):
            return None
        start, length = old
        sliced = touched_slices(good_source.splitlines(), [(start, length, c.new_lines())])
        old_code, new_code = sliced or (good_source, apply_hunk(good_source, c))
        if _code_of(old_code) != _code_of(new_code):
            return None
    except (SyntaxError, ValueError):
        return None
    return [
        f"{c.file} {c.header}: the module's syntax tree is identical "
        "with and without this hunk (only comments/docstrings differ)"
    ]
