"""Taking code out of what the server can name, line numbers kept: the shared steps of the
rules that blank a branch, a function's body or an import (tools/vllm/platform_branches.py,
tools/vllm/by_arguments.py)."""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from tools.python_ast import parse_module

_WORD = re.compile(r"\w+")


Span = tuple[int, int]  # the first and the last line of a block, 1-based
# a plain function of a module (no decorator: none registers it): its name, its body's lines
Function = tuple[str, Span]
# a file some lines of which were blanked: its lines now, its plain functions, its text before
Blanked = tuple[list[str], list[Function], str]


def span(nodes: list[ast.stmt]) -> Span | None:
    """The lines from the first of `nodes` to the end of the last."""
    if not nodes:
        return None
    return nodes[0].lineno, nodes[-1].end_lineno or nodes[-1].lineno


def blank_span(lines: list[str], block: Span | None) -> None:
    if block is None:
        return
    for n in range(block[0] - 1, min(block[1], len(lines))):
        lines[n] = ""


def blank(lines: list[str], nodes: list[ast.stmt]) -> None:
    """Empty the lines from the first of `nodes` to the end of the last."""
    blank_span(lines, span(nodes))


def plain_functions(tree: ast.Module) -> list[Function]:
    return [
        (node.name, span(node.body) or (node.lineno, node.lineno))
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.decorator_list
    ]


def parse_text(text: str) -> ast.Module | None:
    try:
        return parse_module(text)
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


def without_dead_functions(texts: dict[Path, str], blanked: dict[Path, Blanked]) -> dict[Path, str]:
    """`texts` with the blanked files' lines, where the plain functions only blanked code used
    are blanked too: a function whose name a blanked branch held (`rocm_unquantized_gemm`;
    `_import_bench_subcommand_modules`) is dead once its name appears nowhere else in the
    package."""
    unused = [
        (path, function)
        for path, (lines, functions, before) in blanked.items()
        for function in _unused_now(lines, functions, before)
    ]
    named = _files_naming({name for _, (name, _) in unused}, texts)
    for path, (name, body) in unused:
        if not named.get(name, set()) - {path}:  # no other file of the package names it
            blank_span(blanked[path][0], body)
    return {**texts, **{path: "\n".join(lines) for path, (lines, _, _) in blanked.items()}}


def _unused_now(lines: list[str], functions: list[Function], before: str) -> list[Function]:
    """The module's plain functions that a blanked branch used: once blanked, the name appears
    only on its own `def` line (a name never used here is an API of the module: not our
    case). Dead, unless another file names them."""
    now, then = Counter(_WORD.findall("\n".join(lines))), Counter(_WORD.findall(before))
    return [f for f in functions if now[f[0]] == 1 and then[f[0]] > 1]


def _files_naming(names: set[str], texts: dict[Path, str]) -> dict[str, set[Path]]:
    """Which files hold each of `names` as a word: one pass over the package."""
    found: dict[str, set[Path]] = {}
    if not names:
        return found
    for name in names:  # a substring search first: most files never hold the name
        word = re.compile(rf"\b{re.escape(name)}\b")
        found[name] = {path for path, text in texts.items() if name in text and word.search(text)}
    return found


def _line_starts(data: bytes) -> list[int]:
    """Where each line of `data` starts, the line ends Python's tokenizer knows."""
    return [0, *(m.end() for m in re.finditer(rb"\r\n|\r|\n", data))]


def without_strings(text: str, nodes: Iterable[ast.expr]) -> str:
    """`text` with the source of each of `nodes` (string literals, however split over
    implicitly joined ones) replaced by an empty string; line numbers kept. The segments are
    cut from the text's bytes at once (`ast.get_source_segment` splits the whole text anew for
    each node: seconds on a registry's hundreds)."""
    data = text.encode()
    starts = _line_starts(data)
    segments = set()
    for node in nodes:
        if node.end_lineno is None or node.end_col_offset is None:
            continue
        begin = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset
        segments.add(data[begin:end].decode(errors="replace"))
    for segment in sorted(segments - {""}, key=len, reverse=True):
        text = text.replace(segment, "''" + "\n" * segment.count("\n"))
    return text
