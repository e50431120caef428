"""What a Python module does when it is imported, read once from its syntax tree.

For each module: its module-level imports (those under module-level `if`/`try`/`with` included,
with the `if` tests that enclose them; `if TYPE_CHECKING:` bodies skipped, they never run;
imports inside functions skipped, they are lazy), its module-level names (`_is_hip = is_hip()`,
`from sglang.srt.utils import _is_hip`) so that guards can be decided where they are used, and
its top-level classes. Parsing is the cost (~10 ms a module, ~1000 modules for a served model
of the real tree), so summaries are plain data: kept per graph, parsed in parallel where there
are cores, and stored between runs keyed by each file's size and mtime (tools/code_paths/cache.py).
"""

from __future__ import annotations

import ast
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tools.code_paths.cache import SummaryCache
from tools.python_ast import parse_expression, parse_module

Guard = tuple[str, bool]  # an enclosing `if` test as source, and the branch taken


@dataclass(frozen=True)
class ImportStmt:
    module: str  # absolute dotted name (relative imports resolved)
    names: tuple[str, ...]  # `from m import a, b`; () for `import m`
    line: int
    guards: tuple[Guard, ...]


@dataclass(frozen=True)
class Binding:
    line: int
    expr: str | None = None  # NAME = expr
    module: str | None = None  # from module import name [as NAME]
    name: str | None = None


@dataclass
class ModuleSummary:
    imports: list[ImportStmt] = field(default_factory=list)
    bindings: dict[str, Binding] = field(default_factory=dict)
    classes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "imports": [
                [s.module, list(s.names), s.line, [list(g) for g in s.guards]] for s in self.imports
            ],
            "bindings": {k: [b.line, b.expr, b.module, b.name] for k, b in self.bindings.items()},
            "classes": self.classes,
        }

    @classmethod
    def from_json(cls, data: dict) -> ModuleSummary:
        return cls(
            [
                ImportStmt(m, tuple(n), line, tuple((g[0], g[1]) for g in guards))
                for m, n, line, guards in data["imports"]
            ],
            {k: Binding(*v) for k, v in data["bindings"].items()},
            data["classes"],
        )


@lru_cache(maxsize=4096)
def expression(source: str) -> ast.expr:
    return parse_expression(source)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def summarize(tree: ast.Module, dotted: str, is_package: bool) -> ModuleSummary:
    summary = ModuleSummary()
    package = dotted if is_package else dotted.rpartition(".")[0]
    conditional: set[str] = set()  # names bound under a branch: no single value

    def absolute(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = package.split(".")
        base = parts[: len(parts) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def bind(name: str, binding: Binding, top: bool) -> None:
        if top:
            summary.bindings[name] = binding
        else:
            conditional.add(name)

    def walk(stmts: list[ast.stmt], guards: tuple[Guard, ...], top: bool) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.Import):
                summary.imports += [ImportStmt(a.name, (), stmt.lineno, guards) for a in stmt.names]
            elif isinstance(stmt, ast.ImportFrom):
                module = absolute(stmt)
                summary.imports.append(
                    ImportStmt(module, tuple(a.name for a in stmt.names), stmt.lineno, guards)
                )
                for a in stmt.names:
                    bind(a.asname or a.name, Binding(stmt.lineno, module=module, name=a.name), top)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        bind(target.id, Binding(stmt.lineno, expr=ast.unparse(stmt.value)), top)
            elif isinstance(stmt, ast.If):
                test = ast.unparse(stmt.test)
                if not _type_checking(stmt.test):  # its body never runs
                    walk(stmt.body, guards + ((test, True),), False)
                walk(stmt.orelse, guards + ((test, False),), False)
            elif isinstance(stmt, ast.Try):
                for block in (
                    stmt.body,
                    *(h.body for h in stmt.handlers),
                    stmt.orelse,
                    stmt.finalbody,
                ):
                    walk(block, guards, False)
            elif isinstance(stmt, ast.With):
                walk(stmt.body, guards, top)
            elif isinstance(stmt, ast.ClassDef) and top:
                summary.classes.append(stmt.name)

    walk(tree.body, (), True)
    for name in conditional:  # a name bound more than one way has no value to read
        summary.bindings.pop(name, None)
    return summary


def parse_file(path: Path, dotted: str) -> ModuleSummary | None:
    try:
        tree = parse_module(path.read_bytes())
        return summarize(tree, dotted, path.name == "__init__.py")
    except (OSError, SyntaxError, ValueError, RecursionError):  # deeper than unparse can go
        return None


def dotted_name(base: Path, path: Path) -> str:
    """The module a file under `base` is imported as (`pkg/sub/__init__.py`: `pkg.sub`)."""
    parts = path.relative_to(base).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


class ModuleGraph:
    """The modules under `base` (the folder holding the top-level packages), read on demand.

    Files are named relative to `display_root` in evidence (an SGLang package: `srt/x.py`)."""

    def __init__(
        self, base: Path, display_root: Path | None = None, cache: SummaryCache | None = None
    ) -> None:
        self.base = base
        self.display_root = display_root or base
        self.cache = cache
        self._summaries: dict[Path, ModuleSummary | None] = {}
        self._files: dict[str, Path | None] = {}

    def file_of(self, dotted: str) -> Path | None:
        """The file a dotted module name is loaded from, if it is under `base`."""
        if dotted not in self._files:
            path = os.path.join(self.base, *dotted.split(".")) if dotted else ""
            found = (
                next(
                    (
                        p
                        for p in (path + ".py", os.path.join(path, "__init__.py"))
                        if os.path.isfile(p)
                    ),
                    None,
                )
                if path
                else None
            )
            self._files[dotted] = Path(found) if found else None
        return self._files[dotted]

    def dotted(self, path: Path) -> str:
        return dotted_name(self.base, path)

    def display(self, path: Path) -> str:
        root = self.display_root if path.is_relative_to(self.display_root) else self.base
        return path.relative_to(root).as_posix()

    def use_text(self, path: Path, tree: ast.Module) -> None:
        """Read `path` as this tree (a state of the file that is not on disk as such)."""
        self._summaries[path] = summarize(tree, self.dotted(path), path.name == "__init__.py")

    def summary(self, path: Path) -> ModuleSummary | None:
        if path not in self._summaries:
            self.prefetch([path])
        return self._summaries[path]

    def prefetch(self, paths: list[Path]) -> None:
        """Read these modules' summaries: from the cache, else parsed (in parallel if many)."""
        todo = []
        for path in dict.fromkeys(paths):
            if path in self._summaries:
                continue
            cached = self.cache.get(path) if self.cache else None
            if cached is not None:
                self._summaries[path] = ModuleSummary.from_json(cached)
            else:
                todo.append(path)
        dotted = [self.dotted(p) for p in todo]
        workers = min(len(todo) // 16, os.cpu_count() or 1, 16)
        if workers >= 2:
            with ProcessPoolExecutor(workers) as pool:
                parsed = list(pool.map(parse_file, todo, dotted, chunksize=8))
        else:
            parsed = [parse_file(p, d) for p, d in zip(todo, dotted, strict=True)]
        for path, summary in zip(todo, parsed, strict=True):
            self._summaries[path] = summary
            if self.cache and summary is not None:
                self.cache.put(path, summary.to_json())

    def targets(self, stmt: ImportStmt) -> list[Path]:
        """The files one import statement runs: the packages on the way, the module, and
        the submodules it names (`from pkg import submodule`)."""
        parts = stmt.module.split(".")
        found = [self.file_of(".".join(parts[:i])) for i in range(1, len(parts) + 1)]
        found += [self.file_of(f"{stmt.module}.{name}") for name in stmt.names if name != "*"]
        return list(dict.fromkeys(p for p in found if p is not None))

    def binding(self, path: Path, name: str, depth: int = 0) -> tuple[ast.expr, Path, int] | None:
        """The expression a module-level name stands for, followed through `from m import`."""
        summary = self.summary(path)
        bound = summary.bindings.get(name) if summary else None
        if bound is None or depth > 8:
            return None
        if bound.expr is not None:
            try:
                return expression(bound.expr), path, bound.line
            except SyntaxError:
                return None
        source = self.file_of(bound.module or "")
        if source is None:
            return None
        return self.binding(source, bound.name or name, depth + 1)
