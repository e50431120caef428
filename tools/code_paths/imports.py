"""Which modules the server imports, by following module-level imports from known roots.

Importing a module runs its module-level code, so a module that an imported module imports at
module level is imported too; the chain of `file:line imports file` is the evidence. Imports
under a module-level `if` are followed unless the GPU decides the test against them (then they
are kept as "blocked", with the guard, for the evidence). A module on the path runs all of
its module-level imports, whatever it is: a backend the server did not select is on the path
when another module on it imports it (a base class, a helper), and so is what it imports.
`skip` edges are not followed at all (the selecting module imports every backend class only to
choose one). `source_lookup`
reads the module-level names of one file of the bad state, for the hunk-level guard check.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from tools.code_paths.modules import ImportStmt, ModuleGraph, expression, summarize
from tools.gpu.guards import Lookup, decide, no_names
from tools.gpu.info import GpuInfo
from tools.python_ast import parse_module


class Hop(NamedTuple):
    importer: Path
    line: int
    names: tuple[str, ...]
    under: str = ""  # the enclosing tests, as written, and how the GPU decided them


class Blocked(NamedTuple):
    hop: Hop
    guard: str  # the test as written, with the branch it needs
    notes: list[str]


class Reach(NamedTuple):
    via: dict[Path, Hop | None]  # reached module -> how (None: a root)
    roots: dict[Path, str]  # root -> why it is one
    blocked: dict[Path, list[Blocked]]  # not reached: imported only under a false guard


def lookup_in(graph: ModuleGraph, path: Path) -> Lookup:
    """Module-level names of `path`, for the guard evaluator."""

    def find(name: str) -> tuple[ast.expr, Lookup, str] | None:
        found = graph.binding(path, name)
        if found is None:
            return None
        expr, where, line = found
        return expr, lookup_in(graph, where), f"{graph.display(where)}:{line}"

    return find


def _base(tree: ast.Module, path: Path) -> Path | None:
    """The folder holding the top-level package this file's absolute imports name, found
    among its ancestors (`.../python` for `.../python/sglang/srt/x.py` importing sglang)."""
    tops = {
        (n.module or "").split(".")[0]
        for n in tree.body
        if isinstance(n, ast.ImportFrom) and not n.level and n.module
    }
    return next((a.parent for a in path.parents if a.name in tops), None)


@lru_cache(maxsize=64)
def source_lookup(text: str, path: Path | None, display_root: Path | None = None) -> Lookup:
    """Module-level names of one source text (a file of the bad state): its own, and through
    `from m import` those of the modules beside it, when its path is known."""
    try:
        tree = parse_module(text)
    except (SyntaxError, ValueError):
        return no_names
    base = _base(tree, path) if path is not None else None
    if path is None or base is None:
        summary = summarize(tree, "", False)
        label = path.name if path else "this file"

        def local(name: str) -> tuple[ast.expr, Lookup, str] | None:
            bound = summary.bindings.get(name)
            if bound is None or bound.expr is None:
                return None
            return expression(bound.expr), local, f"{label}:{bound.line}"

        return local
    graph = ModuleGraph(base, display_root=display_root)
    graph.use_text(path, tree)
    return lookup_in(graph, path)


def _guards(stmt: ImportStmt, lookup: Lookup, gpu: GpuInfo | None) -> tuple[Blocked | None, str]:
    """The first enclosing test the GPU decides against this import (if any), and how the
    others stand, for the chain's text."""
    said = []
    for test, taken in stmt.guards:
        written = test if taken else f"not ({test})"
        try:
            decision = decide(expression(test), lookup, gpu) if gpu else None
        except SyntaxError:
            decision = None
        if decision is None or decision.value is None:
            said.append(f"`if {written}` (not decided)")
        elif decision.value != taken:
            where = f"if {test}" if taken else f"in the else branch of `if {test}`"
            return Blocked(Hop(Path(), stmt.line, stmt.names), where, decision.notes), ""
        else:
            said.append(f"`if {written}` (true on this GPU)")
    return None, " and ".join(said)


def reach(
    graph: ModuleGraph,
    roots: dict[Path, str],
    gpu: GpuInfo | None,
    skip: Callable[[Path, Path], bool],
) -> Reach:
    """Level by level (each level's modules read together), so each module's chain is a
    shortest one, from the earliest root given among the nearest."""
    via: dict[Path, Hop | None] = {root: None for root in roots}
    blocked: dict[Path, list[Blocked]] = {}
    level = list(roots)
    while level:
        graph.prefetch(level)
        following: list[Path] = []
        for module in level:
            summary = graph.summary(module)
            lookup = lookup_in(graph, module)
            for stmt in summary.imports if summary else []:
                targets = [t for t in graph.targets(stmt) if t != module and not skip(module, t)]
                if not targets:
                    continue
                against, under = _guards(stmt, lookup, gpu)
                hop = Hop(module, stmt.line, stmt.names, under)
                for target in targets:
                    if against is not None:
                        blocked.setdefault(target, []).append(
                            against._replace(hop=against.hop._replace(importer=module))
                        )
                    elif target not in via:
                        via[target] = hop
                        following.append(target)
        level = following
    return Reach(
        via,
        roots,
        {t: b for t, b in blocked.items() if t not in via},
    )


def chain(graph: ModuleGraph, found: Reach, module: Path) -> list[str]:
    """The evidence: the root and why, then each import from it down to `module`."""
    hops: list[str] = []
    at = module
    while (hop := found.via.get(at)) is not None:
        what = (
            f" ({', '.join(hop.names[:3])}{', ...' if len(hop.names) > 3 else ''})"
            if hop.names
            else ""
        )
        under = f" under {hop.under}" if hop.under else ""
        hops.append(
            f"{graph.display(hop.importer)}:{hop.line} imports {graph.display(at)}{what}{under}"
        )
        at = hop.importer
    return [f"chain from {graph.display(at)} ({found.roots.get(at, 'a root')})", *hops[::-1]]
