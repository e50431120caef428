"""The branches that enclose a line of a module, read from its syntax tree.

A line in an `if` body runs only when the test holds; a line in its `else` (an `elif` is an
`if` in the `else`) only when it fails. Function and class boundaries do not stop the walk: a
function defined under `if _is_hip:` exists only there.
"""

from __future__ import annotations

import ast
from typing import NamedTuple


class Branch(NamedTuple):
    test: ast.expr
    taken: bool  # True: the line is in the body; False: in the else branch
    line: int  # the `if` / `elif` line
    header: str  # that line as written (`elif arch == "Glm4MoeForCausalLM":`)


def _within(stmts: list[ast.stmt], line: int) -> ast.stmt | None:
    return next((s for s in stmts if s.lineno <= line <= (s.end_lineno or s.lineno)), None)


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    blocks = [
        getattr(node, name)
        for name in ("body", "orelse", "finalbody")
        if isinstance(getattr(node, name, None), list)
    ]
    return blocks + [h.body for h in getattr(node, "handlers", [])]


def _header(lines: list[str], node: ast.If) -> str:
    first = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else ""
    if first.startswith(("if ", "elif ")) and first.endswith(":"):
        return first
    keyword = "elif" if first.startswith("elif") else "if"
    return f"{keyword} {ast.unparse(node.test)}:"


def enclosing_branches(tree: ast.Module, lines: list[str], line: int) -> list[Branch]:
    """The if/elif/else branches around `line` (1-based), innermost first."""
    found: list[Branch] = []
    stmts: list[ast.stmt] | None = tree.body
    while stmts:
        node = _within(stmts, line)
        if node is None:
            break
        stmts = None
        if isinstance(node, ast.If):
            for taken, block in ((True, node.body), (False, node.orelse)):
                if _within(block, line) is not None:
                    found.append(Branch(node.test, taken, node.lineno, _header(lines, node)))
                    stmts = block
        else:
            stmts = next((b for b in _blocks(node) if _within(b, line) is not None), None)
    return found[::-1]
