"""What a Python file defines and imports, read from its syntax tree (for the links of
tools/code_paths/dependencies.py): module-level and class-level names through module-level
if/try/with blocks, functions defined inside functions (their own file only), and each import
statement with the absolute modules it may load."""

from __future__ import annotations

import ast
import builtins
import keyword
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath

from tools.python_ast import parse_module

LOCAL = "<function>"  # the owner of a function defined inside a function

_MEANINGLESS = set(dir(builtins)) | set(keyword.kwlist) | set(keyword.softkwlist)
_MEANINGLESS |= {"self", "cls", "args", "kwargs"}


def meaningless(name: str) -> bool:
    """Names that link nothing: builtins, keywords, dunders, `self`, one or two letters."""
    return len(name) <= 2 or name in _MEANINGLESS or name.startswith("__")


@dataclass(frozen=True)
class Definition:
    lines: frozenset[int]  # the lines that name it: `def` line and arguments, assignment, import
    owner: str | None  # the class a method or class attribute belongs to
    signature: str | None  # a function's arguments, dumped


@dataclass(frozen=True)
class ModuleImport:
    lines: frozenset[int]
    modules: tuple[str, ...]  # absolute dotted names the statement may load
    names: tuple[tuple[str, str, str], ...]  # (module, name, bound as) of `from m import`
    star: str | None  # the module of `from m import *`
    prefixes: tuple[tuple[str, str], ...]  # (module, the prefix its attributes are used with)


@dataclass
class ModuleNames:
    definitions: dict[str, list[Definition]] = field(default_factory=dict)
    imports: list[ModuleImport] = field(default_factory=list)
    by_line: dict[int, list[tuple[str, Definition]]] = field(default_factory=dict)


def dotted_path(path: str) -> str:
    """`python/pkg/mod.py` -> `python.pkg.mod`; a package's `__init__.py` is the package."""
    parts = PurePosixPath(path).with_suffix("").parts
    return ".".join(parts[:-1] if parts and parts[-1] == "__init__" else parts)


def line_span(first: int, last: int) -> frozenset[int]:
    return frozenset(range(first, max(first, last) + 1))


def _definitions(body: list[ast.stmt], owner: str | None, out: ModuleNames) -> None:
    """Module-level and class-level names, through module-level if/try/with blocks."""
    for node in body:
        found: list[tuple[str, Definition]] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            header = line_span(node.lineno, node.body[0].lineno - 1 if node.body else node.lineno)
            signature = None if isinstance(node, ast.ClassDef) else ast.dump(node.args)
            found.append((node.name, Definition(header, owner, signature)))
            if isinstance(node, ast.ClassDef) and owner is None:
                _definitions(node.body, node.name, out)
            elif not isinstance(node, ast.ClassDef):
                _local_functions(node, out)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            span = line_span(node.lineno, node.end_lineno or node.lineno)
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            found += [(name, Definition(span, owner, None)) for name in names]
        elif isinstance(node, ast.Import | ast.ImportFrom) and owner is None:
            span = line_span(node.lineno, node.end_lineno or node.lineno)
            bound = [a.asname or a.name.split(".")[0] for a in node.names if a.name != "*"]
            found += [(name, Definition(span, None, None)) for name in bound]
        elif isinstance(node, ast.If | ast.Try | ast.With) and owner is None:
            blocks = [getattr(node, key, []) for key in ("body", "orelse", "finalbody")]
            blocks += [h.body for h in getattr(node, "handlers", [])]
            for block in blocks:
                _definitions(block, None, out)
        for name, definition in found:
            out.definitions.setdefault(name, []).append(definition)


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement under `body`, nested blocks included; expressions are not entered
    (definitions and imports are statements: a walk of every node costs several times more)."""
    for node in body:
        yield node
        for key in ("body", "orelse", "finalbody"):
            block = getattr(node, key, None)
            if isinstance(block, list):
                yield from statements(block)
        for inner in getattr(node, "handlers", None) or getattr(node, "cases", None) or []:
            yield from statements(inner.body)


def _local_functions(function: ast.FunctionDef | ast.AsyncFunctionDef, out: ModuleNames) -> None:
    """Functions defined inside a function: used by bare name in the same file only."""
    for node in statements(function.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            header = line_span(node.lineno, node.body[0].lineno - 1 if node.body else node.lineno)
            local = Definition(header, LOCAL, ast.dump(node.args))
            out.definitions.setdefault(node.name, []).append(local)


def _package(path: str, level: int) -> str:
    """The package a relative import of `level` dots starts from, in the repository's dots."""
    parts = dotted_path(path).split(".")[: None if path.endswith("__init__.py") else -1]
    return ".".join(parts[: len(parts) - (level - 1)] if level > 1 else parts)


def _import(node: ast.Import | ast.ImportFrom, path: str) -> ModuleImport:
    span = line_span(node.lineno, node.end_lineno or node.lineno)
    if isinstance(node, ast.Import):
        prefixes = tuple((a.name, a.asname or a.name) for a in node.names)
        return ModuleImport(span, tuple(a.name for a in node.names), (), None, prefixes)
    base = node.module or ""
    if node.level:
        base = ".".join(p for p in (_package(path, node.level), base) if p)
    named = [a for a in node.names if a.name != "*"]
    return ModuleImport(
        span,
        (base, *(f"{base}.{a.name}" for a in named)),
        tuple((base, a.name, a.asname or a.name) for a in named),
        base if len(named) < len(node.names) else None,
        tuple((f"{base}.{a.name}", a.asname or a.name) for a in named),
    )


@lru_cache(maxsize=256)
def read_module(source: str | None, path: str) -> ModuleNames | None:
    """A Python file's names and imports; None for another file, or one that does not parse."""
    if source is None or not path.endswith(".py"):
        return None
    try:
        tree = parse_module(source)
    except (SyntaxError, ValueError):
        return None
    module = ModuleNames()
    _definitions(tree.body, None, module)
    for name, definitions in module.definitions.items():
        for d in definitions if not meaningless(name) else []:
            for line in d.lines:
                module.by_line.setdefault(line, []).append((name, d))
    module.imports = [
        _import(node, path)
        for node in statements(tree.body)
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    return module
