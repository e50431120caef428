"""Imports inside functions that run: the modules SGLang imports lazily at startup.

Much of what a server builds is imported inside a function (the draft worker in
`SpeculativeAlgorithm.create_worker`, the tensor-parallel worker in
`Scheduler.init_tp_model_worker`). Starting from the constructors of the server's own process
classes (`Scheduler` in scheduler.py, `ModelRunner` in model_runner.py: the class named as its
module), the body of each function that runs is read in order. A call runs its function too:
`self.name(...)` (a method of the same class), `self.x.name(...)` (where `name` is a method of
exactly one class of the package), `name(...)` (a function the module defines or imports),
`Name(...)` (the constructor of the one class of that name); calls on anything else, torch's
objects included, are not followed. An import runs. Each under the branches around it,
decided from the server arguments (tools/code_paths/conditions.py): a branch that fails is not
taken, one that cannot be decided is not followed (what it imports stays as the module-level
chains leave it). `if test: return` guards what follows it. Each import found is quoted with
the calls that led to it and the tests that held.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from tools.code_paths.conditions import Facts
from tools.code_paths.modules import ModuleGraph, summarize
from tools.python_ast import parse_module

MAX_CALLS = 400  # functions followed per run, whatever the package's size
_DEF = re.compile(r"^\s*def (\w+)\(", re.M)
_CLASS = re.compile(r"^class (\w+)\b", re.M)


@dataclass(frozen=True)
class LazyImport:
    importer: Path
    line: int
    target: Path
    why: str  # the functions that led here and the tests that held


def _on_self(node: ast.expr) -> bool:
    """`self.x`: an object the class holds (not torch's, not a call's result)."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _returns(stmts: list[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], ast.Return | ast.Raise)


@dataclass
class _Function:
    path: Path
    cls: str | None
    node: ast.FunctionDef
    trail: str  # how it came to run


class Reader:
    def __init__(self, graph: ModuleGraph, pkg: Path, facts: Facts, texts: dict[str, str]):
        self.graph, self.pkg, self.facts = graph, pkg, facts
        self.trees: dict[Path, ast.Module | None] = {}
        self.found: list[LazyImport] = []
        self.seen: set[tuple[Path, str]] = set()
        self.queue: list[_Function] = []
        self.defs: dict[str, list[str]] = {}  # function name -> the files defining one
        self.classes: dict[str, list[str]] = {}
        for rel, text in texts.items():
            for name in set(_DEF.findall(text)):
                self.defs.setdefault(name, []).append(rel)
            for name in set(_CLASS.findall(text)):
                self.classes.setdefault(name, []).append(rel)

    def tree(self, path: Path) -> ast.Module | None:
        if path not in self.trees:
            try:
                self.trees[path] = parse_module(path.read_text(errors="replace"))
            except (OSError, SyntaxError, ValueError):
                self.trees[path] = None
        return self.trees[path]

    def methods(self, path: Path, cls: str) -> dict[str, ast.FunctionDef]:
        tree = self.tree(path)
        for node in tree.body if tree else []:
            if isinstance(node, ast.ClassDef) and node.name == cls:
                return {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
        return {}

    def imported_function(
        self, path: Path, name: str, depth: int = 0
    ) -> tuple[Path, str | None, ast.FunctionDef] | None:
        """The module-level function `name` means in `path`: defined there, or followed
        through its `from m import name`."""
        tree = self.tree(path)
        for node in tree.body if tree and depth <= 6 else []:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return path, None, node
        summary = self.graph.summary(path)
        bound = summary.bindings.get(name) if summary and depth <= 6 else None
        source = self.graph.file_of(bound.module) if bound and bound.module else None
        if bound is None or source is None:
            return None
        return self.imported_function(source, bound.name or name, depth + 1)

    def unique_class_init(self, name: str) -> tuple[Path, str | None, ast.FunctionDef] | None:
        """`Name(...)` constructs the one class of this name in the package: its __init__."""
        holders = self.classes.get(name, [])
        if len(holders) != 1:
            return None
        init = self.methods(self.pkg / holders[0], name).get("__init__")
        return (self.pkg / holders[0], name, init) if init else None

    def unique_def(self, name: str) -> tuple[Path, str | None, ast.FunctionDef] | None:
        """The one function or method of this name in the package (text search first)."""
        holders = self.defs.get(name, [])
        if len(holders) != 1:
            return None
        path = self.pkg / holders[0]
        tree = self.tree(path)
        found = [
            (path, cls.name if isinstance(cls, ast.ClassDef) else None, f)
            for cls in (tree.body if tree else [])
            for f in (cls.body if isinstance(cls, ast.ClassDef) else [cls])
            if isinstance(f, ast.FunctionDef) and f.name == name
        ]
        return found[0] if len(found) == 1 else None

    def run(self, fn: _Function) -> None:
        key = (fn.path, f"{fn.cls}.{fn.node.name}")
        if key in self.seen or len(self.seen) >= MAX_CALLS:
            return
        self.seen.add(key)
        local = {
            t.id: stmt.value
            for stmt in ast.walk(fn.node)
            if isinstance(stmt, ast.Assign)
            for t in stmt.targets
            if isinstance(t, ast.Name)
        }
        self.block(fn, fn.node.body, local, [])

    def block(
        self, fn: _Function, stmts: list[ast.stmt], local: dict[str, ast.expr], held: list[str]
    ) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.If):
                holds = self.facts.holds(stmt.test, local)
                test = ast.unparse(stmt.test)
                if holds is True:
                    self.block(fn, stmt.body, local, [*held, f"`{test}` holds"])
                    if _returns(stmt.body):
                        return
                elif holds is False:
                    self.block(fn, stmt.orelse, local, [*held, f"`{test}` is false"])
                    if _returns(stmt.orelse):
                        return
                elif _returns(stmt.body) or _returns(stmt.orelse):
                    return  # what follows runs only on an undecided branch
                continue
            if isinstance(stmt, ast.Try | ast.With):
                self.block(fn, stmt.body, local, held)
                continue
            if isinstance(stmt, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
                continue  # defined, not run
            self.statement(fn, stmt, held)

    def statement(self, fn: _Function, stmt: ast.stmt, held: list[str]) -> None:
        where = f"{self.graph.display(fn.path)}:{stmt.lineno}"
        trail = f"{fn.trail} -> {fn.node.name}" if fn.trail else f"{fn.cls}.{fn.node.name}"
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            alone = ast.Module(body=[stmt], type_ignores=[])
            dotted = self.graph.dotted(fn.path)
            for imp in summarize(alone, dotted, fn.path.name == "__init__.py").imports:
                for module in self.graph.targets(imp):
                    why = f"inside {trail}, which runs" + (f" ({'; '.join(held)})" if held else "")
                    self.found.append(LazyImport(fn.path, stmt.lineno, module, why))
            return
        for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
            func = call.func
            target: tuple[Path, str | None, ast.FunctionDef] | None = None
            if isinstance(func, ast.Name):
                target = (
                    self.unique_class_init(func.id)
                    if func.id[:1].isupper()
                    else self.imported_function(fn.path, func.id)
                )
                if target is not None:
                    self.queue.append(_Function(*target, f"{trail} ({where})"))
                continue
            if not isinstance(func, ast.Attribute):
                continue
            if isinstance(func.value, ast.Name) and func.value.id == "self" and fn.cls:
                method = self.methods(fn.path, fn.cls).get(func.attr)
                target = (fn.path, fn.cls, method) if method else None
            elif _on_self(func.value):  # `self.spec_algorithm.create_worker(...)`
                found = self.unique_def(func.attr)
                target = found if found and found[1] is not None else None  # a method only
            if target is not None:
                self.queue.append(_Function(target[0], target[1], target[2], f"{trail} ({where})"))


def lazy_imports(
    graph: ModuleGraph, pkg: Path, roots: list[Path], facts: Facts, texts: dict[str, str]
) -> list[LazyImport]:
    """The imports that functions running at startup make, from the process classes of `roots`
    (each module's class named as the module: scheduler.py's `Scheduler`)."""
    reader = Reader(graph, pkg, facts, texts)
    for root in roots:
        cls = root.stem.replace("_", "").lower()
        tree = reader.tree(root)
        for node in tree.body if tree else []:
            if isinstance(node, ast.ClassDef) and node.name.lower() == cls:
                init = reader.methods(root, node.name).get("__init__")
                if init is not None:
                    reader.queue.append(_Function(root, node.name, init, ""))
    while reader.queue:
        reader.run(reader.queue.pop(0))
    return reader.found
