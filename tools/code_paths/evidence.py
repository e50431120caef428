"""Which files of an SGLang source tree the server runs, from its startup log and the source.

The attention backend the log's server_args resolved is mapped to its module(s) through the
target's own `attention_registry.py` (the `@register_attention_backend(name)` factories and the
modules they import), never through a table of ours; the model architecture is mapped to the
model file that defines its class. A registry factory that picks a module under a GPU guard
(`if _is_npu: ... elif _is_hip: ... else: ...`) is decided by the GPU the log (or `--gpu`)
reports.

Then imports are followed (tools/code_paths/imports.py). The roots are the modules a serving
process certainly imports: the selected backends' modules, the served model's file, the
model runner (every scheduler process imports it, and through it the registry), and the HTTP
server's module when the log shows it ran (a line only it prints). A module
reached from a root by module-level imports is on-path, with the chain quoted. A registered
backend module that the server did not select is a dead end: reached, it is on-path only when
an on-path module other than the selecting one imports it (a helper or a base class used
elsewhere); reached only through another unselected backend, it stays off. A file no chain
reaches is off only when nothing the server can run names it at all (tools/code_paths/closure.py:
imports in functions, names in strings, computed names); otherwise it stays "unknown", since
no chain from these roots is no proof that nothing imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pydantic import BaseModel

from tools.code_paths.architectures import architecture_facts
from tools.code_paths.branches import (
    RUNNER,
    Condition,
    Registration,
    mentions_mla,
    read_branches,
    server_flag,
    uses,
)
from tools.code_paths.cache import SummaryCache
from tools.code_paths.closure import Closure, can_import
from tools.code_paths.conditions import Facts, algorithm_methods
from tools.code_paths.elsewhere import package_texts, server_texts
from tools.code_paths.imports import lookup_in, reach
from tools.code_paths.layout import SGLANG_PROCESSES
from tools.code_paths.modules import ModuleGraph
from tools.code_paths.running import lazy_imports
from tools.code_paths.serving import Serving, read_servings
from tools.code_paths.verdicts import FileVerdict, Judge
from tools.errors import ToolError
from tools.gpu.guards import mentions_gpu
from tools.gpu.info import GpuInfo
from tools.python_ast import parse_module

REGISTRY = "srt/layers/attention/attention_registry.py"
# how a server is started: `python -m sglang.launch_server`, `sglang serve` (console script)
ENTRY_POINTS = ("launch_server.py", "cli/main.py", "__init__.py")


class PathsReport(BaseModel):
    files: list[FileVerdict]
    gpu: GpuInfo | None = None
    servings: list[Serving] = []  # the models the server runs and their attention backends


def package_root(repo: Path) -> Path:
    """The `sglang` package folder inside a checkout, an unpacked wheel, or itself."""
    if not repo.is_dir():
        raise ToolError(
            f"{repo} is not a folder (--repo wants an SGLang checkout or an unpacked wheel)"
        )
    for candidate in (repo / "python" / "sglang", repo / "sglang", repo):
        if (candidate / REGISTRY).exists() or (candidate / RUNNER).exists():
            return candidate
    raise ToolError(f"{repo} is not an SGLang source tree (neither {REGISTRY} nor {RUNNER} found)")


def read_registry(pkg: Path, graph: ModuleGraph) -> list[Registration]:
    """0.5.x: the `@register_attention_backend(name)` factories and the modules they import;
    a module imported only under a GPU guard in the factory is recorded with the guard."""
    path = pkg / REGISTRY
    names = lookup_in(graph, path)  # the registry's `_is_npu = is_npu()` and the like
    try:
        tree = parse_module(path.read_text(errors="replace"))
    except (OSError, SyntaxError):  # unreadable: no registration is known
        return []
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            if (
                isinstance(deco, ast.Call)
                and getattr(deco.func, "id", "") == "register_attention_backend"
                and deco.args
                and isinstance(deco.args[0], ast.Constant)
            ):
                direct: set[str] = set()
                conditional: dict[str, Condition] = {}
                uses(
                    node.body,
                    {},
                    lambda test: (
                        mentions_gpu(test, names) or mentions_mla(test) or server_flag(test)
                    ),
                    direct,
                    conditional,
                )
                found.append(
                    Registration(
                        backend=str(deco.args[0].value),
                        source=REGISTRY,
                        line=deco.lineno,
                        selector=f"@{ast.unparse(deco)}",
                        modules=sorted(direct),
                        conditional=[c for m, c in sorted(conditional.items()) if m not in direct],
                    )
                )
    return found


def read_selection(pkg: Path, graph: ModuleGraph) -> list[Registration]:
    """How this tree picks its attention backend: the registry, or an older layout's branches."""
    return read_registry(pkg, graph) if (pkg / REGISTRY).exists() else read_branches(pkg)


def _relative(path: str, pkg: Path) -> str:
    """`python/sglang/srt/x.py`, `sglang/srt/x.py`, `srt/x.py` or `x.py` under srt/: `srt/x.py`;
    `sglang/test/y.py`: `test/y.py`."""
    inside = f"{pkg.name}/"
    if path.startswith(inside) or f"/{inside}" in path:
        return path[path.find(inside) + len(inside) :]
    at = path.find("srt/")
    if at >= 0:
        return path[at:]
    return f"srt/{path}" if (pkg / "srt" / path).exists() else path


def served_file(pkg: Path, graph: ModuleGraph, architecture: str) -> str | None:
    """The package-relative model file whose top level defines `architecture`. A text search
    only narrows which of the ~300 model files get parsed."""
    for path in sorted((pkg / "srt" / "models").glob("*.py")):
        try:
            named = f"class {architecture}" in path.read_text(errors="replace")
        except OSError:
            continue
        summary = graph.summary(path) if named else None
        if summary and architecture in summary.classes:
            return f"srt/models/{path.name}"
    return None


def _lazily_imported(
    graph: ModuleGraph, pkg: Path, roots: dict[Path, str], args: dict, servings: list[Serving]
) -> dict[Path, str]:
    """Modules imported inside the functions that run at startup, each with why."""
    backends = servings[0].backends
    facts = Facts(
        args={**args, "attention_backend": backends[0]} if len(backends) == 1 else args,
        algorithm=str(args.get("speculative_algorithm") or "NONE").upper(),
        methods=algorithm_methods(pkg),
    )
    processes = {pkg / m for m in (*SGLANG_PROCESSES, RUNNER)}
    seeds = [root for root in roots if root in processes]
    found: dict[Path, str] = {}
    for lazy in lazy_imports(graph, pkg, seeds, facts, server_texts(pkg)):
        if lazy.target not in roots:
            found.setdefault(
                lazy.target, f"imported at {graph.display(lazy.importer)}:{lazy.line} {lazy.why}"
            )
    return found


def _closure(judge: Judge, server_args: dict) -> Closure:
    """Every file the server could import. The unselected backends are not followed, nor the
    other models' files, unless followed code names one (a function importing a class of it)."""
    pkg = judge.pkg
    starts = [*judge.found.via, *(pkg / e for e in ENTRY_POINTS)]
    values = [v for v in server_args.values() if isinstance(v, str)]
    stops = judge.stops
    return can_import(
        pkg.parent,
        package_texts(pkg),
        starts,
        lambda p: p not in stops,
        values,
        named_only=judge.other_models,
    )


def classify(
    files: list[str],
    pkg: Path,
    server_args: dict | None,
    args_line: int | None,
    architecture: str | None,
    gpu: GpuInfo | None = None,
    log_text: str = "",
) -> PathsReport:
    """Each file's status, from the selection, the log and the import chains; a source nested
    deeper than the readers can follow (a parsed chain of 900 additions) decides nothing."""
    try:
        return _classify(files, pkg, server_args, args_line, architecture, gpu, log_text)
    except RecursionError:
        why = "a source on the way is nested too deeply to follow (RecursionError): not decided"
        unknown = [
            FileVerdict(path=_relative(f, pkg), status="unknown", evidence=[why]) for f in files
        ]
        return PathsReport(files=unknown, gpu=gpu, servings=[])


def _classify(
    files: list[str],
    pkg: Path,
    server_args: dict | None,
    args_line: int | None,
    architecture: str | None,
    gpu: GpuInfo | None,
    log_text: str,
) -> PathsReport:
    cache = SummaryCache(pkg)
    graph = ModuleGraph(pkg.parent, display_root=pkg, cache=cache)
    registrations = read_selection(pkg, graph)
    servings = (
        read_servings(server_args or {}, args_line, log_text, architecture_facts(pkg), architecture)
        if server_args or log_text or architecture
        else []
    )
    served = {
        s.architecture: served_file(pkg, graph, s.architecture) for s in servings if s.architecture
    }
    judge = Judge(
        graph=graph,
        pkg=pkg,
        registrations=registrations,
        servings=servings,
        server_args=server_args or {},
        args_line=args_line,
        gpu=gpu,
        served=served,
        log_text=log_text,
    )
    roots = judge.roots()
    if servings:  # a server's log: what its startup functions import lazily runs too
        roots |= _lazily_imported(graph, pkg, roots, server_args or {}, servings)
    backend_files = {
        pkg / m for r in registrations for m in [*r.modules, *(c.module for c in r.conditional)]
    }
    selectors = {pkg / r.source for r in registrations}
    judge.found = reach(
        graph,
        roots,
        gpu,
        skip=lambda importer, target: importer in selectors and target in backend_files,
    )
    judge.stops = {f for f in backend_files - set(roots) if f not in judge.found.via}
    if servings:
        judge.other_models = judge.other_model_files()
        judge.closure = _closure(judge, server_args or {})
        judge.other_models &= judge.closure.listed  # the rest may run: named by followed code
    verdicts = [judge.verdict(given, _relative(given, pkg)) for given in files]
    cache.save()  # after the verdicts: they read model files of their own
    return PathsReport(files=verdicts, gpu=gpu, servings=servings)
