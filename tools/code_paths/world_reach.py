"""Which modules of a world of its own (one platform's code, the package's tests) code outside
that world can import, on the server's GPU.

A module is named from outside when a file outside the world imports it (at any level, by
absolute or relative name), writes its name as a string, or imports a package's submodules by a
computed name (closure.mentions resolves all of these). A naming that stands only under a test
the GPU decides against (`if _is_npu:` on CUDA, `else` of `if _is_cuda`) cannot run: it is set
aside, with its place for the evidence. Importing a module imports the packages above it, and a
module reached from outside imports what it names in turn: both are followed inside the world.
Only files the server can import at all name anything, and a file the selection decided off (an
unselected backend) leads nowhere.
"""

from __future__ import annotations

import ast
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tools.code_paths.closure import Mentions, mentions
from tools.code_paths.enclosing import Branch, enclosing_branches
from tools.code_paths.imports import source_lookup
from tools.code_paths.modules import dotted_name
from tools.gpu.guards import Lookup, decide
from tools.gpu.info import GpuInfo
from tools.python_ast import parse_module

World = tuple[tuple[str, str, str | None], ...]  # (path in the package, text, world key)


@dataclass
class WorldReach:
    reached: set[str] = field(default_factory=set)  # dotted names outside code can import
    # dotted name -> the places that name it only under a test false on this GPU
    dead: dict[str, list[str]] = field(default_factory=dict)


def _hits(m: Mentions, inside: AbstractSet[str], children: dict[str, set[str]]) -> set[str]:
    """The modules of `inside` that a file can import: by name, through a module below one (a
    package's `__init__` runs first), or by a computed name among a package's submodules.
    `children`: the modules of `inside` by the package they are in."""
    named = {
        ".".join(parts[:i])
        for n in m.names
        if (parts := n.split("."))
        for i in range(1, len(parts) + 1)
    }
    found = named & inside
    for package in m.children_of:
        found |= children.get(package, set())
    if m.walks:
        found |= {module for module in inside if any(module.startswith(s + ".") for s in m.strings)}
    return found


def _named_by(node: ast.AST, package: str) -> set[str]:
    """The dotted names one node of a file in `package` makes Python import."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if isinstance(node, ast.ImportFrom):
        parts = package.split(".")
        base = parts[: len(parts) - node.level + 1] if node.level else []
        module = ".".join(base + ([node.module] if node.module else []))
        return {module} | {f"{module}.{alias.name}" for alias in node.names}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value.partition(":")[0]}
    return set()


def _places(
    rel: str, text: str, pkg: Path, gpu: GpuInfo, wanted: set[str]
) -> tuple[set[str], dict[str, list[str]]] | None:
    """Which of `wanted` the file names where it can run, and where it names each under a test
    false on this GPU; None where the file cannot be read as code."""
    try:
        tree = parse_module(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    dotted = dotted_name(pkg.parent, pkg / rel)
    package = dotted if rel.endswith("__init__.py") else dotted.rpartition(".")[0]
    lines, lookup = text.splitlines(), source_lookup(text, pkg / rel)
    live: set[str] = set()
    dead: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        said = _named_by(node, package)
        named = {m for m in wanted if any(n == m or n.startswith(m + ".") for n in said)}
        if not named:
            continue
        line = getattr(node, "lineno", 0)
        against = next(
            (b for b in enclosing_branches(tree, lines, line) if _false(b, lookup, gpu)), None
        )
        if against is None:
            live |= named
            continue
        branch = f"`{against.header}`" if against.taken else f"the else of `{against.header}`"
        for module in named:
            dead.setdefault(module, []).append(f"{rel}:{line}, under {branch}")
    return live, dead


def _false(branch: Branch, lookup: Lookup, gpu: GpuInfo) -> bool:
    """The GPU decides the branch's test against the branch."""
    decision = decide(branch.test, lookup, gpu)
    return decision.value is not None and decision.value != branch.taken


def world_reach(
    pkg: Path,
    texts: World,
    key: str,
    gpu: GpuInfo | None,
    runs: frozenset[str] | None = None,
    stops: frozenset[str] = frozenset(),
) -> WorldReach:
    """The modules of world `key` that code outside it can import on `gpu`. `runs`: the files
    the server can import at all (closure.py), where known: only those name anything; `stops`:
    the files the selection decided off (an unselected backend): what only they name is not
    reached through them."""
    return _world_reach(pkg, texts, key, gpu.model_dump_json() if gpu else None, runs, stops)


@lru_cache(maxsize=8)
def _world_reach(
    pkg: Path,
    texts: World,
    key: str,
    gpu_json: str | None,
    runs: frozenset[str] | None,
    stops: frozenset[str],
) -> WorldReach:
    gpu = GpuInfo.model_validate_json(gpu_json) if gpu_json else None
    dotted = {rel: dotted_name(pkg.parent, pkg / rel) for rel, _, _ in texts}
    inside = {dotted[rel]: (rel, text) for rel, text, at in texts if at == key}
    children: dict[str, set[str]] = {}
    for module in inside:
        children.setdefault(module.rpartition(".")[0], set()).add(module)
    found = WorldReach()
    for rel, text, at in texts:
        if at == key or rel in stops or (runs is not None and rel not in runs):
            continue
        said = mentions(text, dotted[rel], rel.endswith("__init__.py"))
        hits = _hits(said, inside.keys(), children) - found.reached  # reached: settled
        if not hits:
            continue
        places = _places(rel, text, pkg, gpu, hits) if gpu is not None else None
        for module in hits:
            # named by no node of the syntax tree (a computed name, a docstring): it can run
            if places is None or module in places[0] or module not in places[1]:
                found.reached.add(module)
            else:
                found.dead.setdefault(module, []).extend(places[1][module])
    todo = [m for m in found.reached if inside.get(m, ("",))[0] not in stops]
    while todo:  # the packages above each, and what each names in turn, inside the world
        module = todo.pop()
        parts = module.split(".")
        more = {".".join(parts[:i]) for i in range(1, len(parts))} & inside.keys()
        if module in inside and inside[module][0] not in stops:
            rel, text = inside[module]
            said = mentions(text, module, rel.endswith("__init__.py"))
            more |= _hits(said, inside.keys(), children)
        for new in more - found.reached:
            found.reached.add(new)
            todo.append(new)
    return found
