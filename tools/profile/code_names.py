"""The functions of a Python module with the names CPython gives their code, and the function
a torch trace names by its code's short name and first line (`forward@50`): in a trace of the
bad tree and one of the good, the same function may start on another line, and several classes'
`forward` share a file, so a trace's frames are named as the sampler names them
(`Class.method`) wherever the file can be read."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from tools.digits import is_digits
from tools.python_ast import parse_module


@dataclass
class FunctionSpan:
    qualname: str
    first: int  # the `def` line
    last: int
    uses: set[str] = field(default_factory=set)  # names and attributes its body mentions
    start: int = 0  # its first decorator's line (the code's first line), else `first`


_EXPRESSIONS: dict[type[ast.expr], str] = {ast.Lambda: "<lambda>", ast.GeneratorExp: "<genexpr>"}
_EXPRESSIONS |= {ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>", ast.DictComp: "<dictcomp>"}


def functions(tree: ast.Module, expressions: bool = False) -> list[FunctionSpan]:
    """Every function of a module with the qualified name CPython gives its code; with
    `expressions`, the lambdas and comprehensions too (code of their own, as a trace sees)."""
    found: list[FunctionSpan] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                uses = {n.id for n in ast.walk(child) if isinstance(n, ast.Name)}
                uses |= {n.attr for n in ast.walk(child) if isinstance(n, ast.Attribute)}
                start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                last = child.end_lineno or child.lineno
                found.append(FunctionSpan(name, child.lineno, last, uses, start))
                walk(child, f"{name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            elif expressions and isinstance(child, ast.expr) and type(child) in _EXPRESSIONS:
                name = f"{prefix}{_EXPRESSIONS[type(child)]}"
                last = child.end_lineno or child.lineno
                found.append(FunctionSpan(name, child.lineno, last, set(), child.lineno))
                # a lambda's code holds its locals; a comprehension's names sit right under it
                walk(child, f"{name}.<locals>." if isinstance(child, ast.Lambda) else f"{name}.")
            else:
                walk(child, prefix)

    walk(tree, "")
    return found


def named(spans: list[FunctionSpan], name: str) -> FunctionSpan | None:
    """The function `name` names: a qualified name (the sampler's), or a torch trace's
    `name@line` (the code's short name and a line of it)."""
    short, at, line = name.rpartition("@")
    if not at or not is_digits(line):
        return next((f for f in spans if f.qualname == name), None)
    holding = [
        f
        for f in spans
        if f.qualname.rsplit(".", 1)[-1] == short and f.start <= int(line) <= f.last
    ]
    return max(holding, key=lambda f: f.start, default=None)  # the innermost such code


class SourceNames:
    """`name@line` -> `Qualified.name` for the files of one tree, each parsed once."""

    def __init__(self) -> None:
        self._spans: dict[str, list[FunctionSpan]] = {}

    def qualname(self, file: str, name: str, line: int) -> str:
        """The qualified name of the function `name` starting at `line` of `file` (as the
        trace names it where the file cannot be read or holds no such function)."""
        if file not in self._spans:
            try:
                self._spans[file] = functions(parse_module(Path(file).read_bytes()), True)
            except (OSError, SyntaxError, ValueError, RecursionError):
                self._spans[file] = []
        found = named(self._spans[file], f"{name}@{line}")
        return found.qualname if found is not None else f"{name}@{line}"
