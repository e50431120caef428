"""Taking code out of what the server can name, line numbers kept: the shared steps of the
rules that blank a branch, a function's body or an import (tools/vllm/platform_branches.py,
tools/vllm/by_arguments.py)."""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

_WORD = re.compile(r"\w+")


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


def without_dead_functions(
    texts: dict[Path, str], blanked: dict[Path, tuple[list[str], ast.Module, str]]
) -> dict[Path, str]:
    """`texts` with the blanked files' lines (path -> (lines, tree, text before)), where the
    plain functions only blanked code used are blanked too: a function whose name a blanked
    branch held (`rocm_unquantized_gemm`; `_import_bench_subcommand_modules`) is dead once
    its name appears nowhere else in the package."""
    unused = [
        (path, node)
        for path, (lines, tree, before) in blanked.items()
        for node in _unused_now(lines, tree, before)
    ]
    named = _files_naming({node.name for _, node in unused}, texts)
    for path, node in unused:
        if not named.get(node.name, set()) - {path}:  # no other file of the package names it
            blank(blanked[path][0], node.body)
    return {**texts, **{path: "\n".join(lines) for path, (lines, _, _) in blanked.items()}}


def _unused_now(
    lines: list[str], tree: ast.Module, before: str
) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module's plain functions (no decorator: none registers them) that a blanked branch
    used: once blanked, the name appears only on its own `def` line (a name never used here
    is an API of the module: not our case). Dead, unless another file names them."""
    now, then = Counter(_WORD.findall("\n".join(lines))), Counter(_WORD.findall(before))
    return [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and not node.decorator_list
        and now[node.name] == 1
        and then[node.name] > 1
    ]


def _files_naming(names: set[str], texts: dict[Path, str]) -> dict[str, set[Path]]:
    """Which files hold each of `names` as a word: one pass over the package."""
    found: dict[str, set[Path]] = {}
    if not names:
        return found
    for path, text in texts.items():
        for name in names.intersection(_WORD.findall(text)):
            found.setdefault(name, set()).add(path)
    return found
