"""The house rules of docs/architecture.md, read from the source: the method on one screen,
short functions and modules, tools below agent, and no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO_ROOT

LAB_TARGETS = (
    "tools/lab/sglang-tree",
    "tools/lab/transformers-target",
    "tools/lab/tp-target",
    "tools/lab/vllm-tree",
)


def _sources() -> list[Path]:
    files = sorted((REPO_ROOT / "agent").rglob("*.py")) + sorted(
        (REPO_ROOT / "tools").rglob("*.py")
    )
    return [f for f in files if not str(f.relative_to(REPO_ROOT)).startswith(LAB_TARGETS)]


def _module(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(path: Path) -> set[str]:
    """Modules imported when `path` is imported (not inside functions, not TYPE_CHECKING-only)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if name.split(".")[0] in ("agent", "tools")}


def test_graph_reads_as_the_method_on_one_screen() -> None:
    assert len((REPO_ROOT / "agent" / "graph.py").read_text().splitlines()) <= 150


def test_functions_and_modules_stay_short() -> None:
    long_functions, long_modules = [], []
    for path in _sources():
        text = path.read_text()
        if len(text.splitlines()) > 400:
            long_modules.append(str(path.relative_to(REPO_ROOT)))
        if str(path.relative_to(REPO_ROOT)).startswith("tools/lab/"):
            continue  # lab targets and their tables are data written as code
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 60:
                    long_functions.append(f"{_module(path)}.{node.name}: {length} lines")
    assert long_modules == []
    assert long_functions == []


def test_tools_never_import_agent() -> None:
    offenders = []
    for path in _sources():
        if not _module(path).startswith("tools"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{_module(path)} imports {n}" for n in names if n.split(".")[0] == "agent"
            ]
    assert offenders == []


def test_no_import_cycle() -> None:
    modules = {_module(path): path for path in _sources()}
    edges = {
        name: {m for m in _top_level_imports(path) if m in modules and m != name}
        for name, path in modules.items()
    }
    state: dict[str, str] = {}
    cycles: list[list[str]] = []

    def visit(name: str, trail: list[str]) -> None:
        state[name] = "open"
        for nxt in sorted(edges[name]):
            if state.get(nxt) == "open":
                cycles.append(trail[trail.index(nxt) :] + [nxt] if nxt in trail else [name, nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[name] = "done"

    for name in sorted(modules):
        if name not in state:
            visit(name, [name])
    assert cycles == []
