"""Which files of a vLLM source tree the server runs, from its startup log and the source.

The same engine as SGLang's (tools/code_paths: import chains from roots, the closure of what
can be imported at all, other platforms' and other programs' worlds, the "unknown, never off
when undecided" rule), with vLLM's own roots and selections, read from the release:

- roots: the processes every vLLM server of that kind starts (the OpenAI API server, the V1
  engine core or the V0 engine, the GPU worker and its model runner, the multiprocessing
  executor when the log shows worker processes), the selected attention backend's module, the
  served models' files through the model registry, and the speculator of the method the
  engine config names (tools/vllm/selection.py);
- the models: the target's architecture from the first `Resolved architecture:` line (else
  `--arch`), a draft's from the second, else the class 0.8's EAGLE proposer builds for the
  method; what cannot be read stays unknown and keeps every model file from being called off.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tools.code_paths.branches import Registration
from tools.code_paths.cache import SummaryCache
from tools.code_paths.closure import Closure, can_import
from tools.code_paths.definitions import dotted_path
from tools.code_paths.elsewhere import package_texts
from tools.code_paths.evidence import PathsReport
from tools.code_paths.imports import reach
from tools.code_paths.layout import Layout, Roots
from tools.code_paths.modules import ModuleGraph
from tools.code_paths.serving import Serving
from tools.code_paths.verdicts import Judge
from tools.gpu.info import GpuInfo
from tools.server_facts import Speculative
from tools.vllm.by_arguments import (
    communicator_blanked,
    communicator_imports,
    connectors_blanked,
    executor_backend,
    executor_blanked,
    world_size,
)
from tools.vllm.cli_branches import other_subcommand_blanked
from tools.vllm.log import speculative
from tools.vllm.platform_branches import other_platform_blanked, platform_choices_blanked
from tools.vllm.selection import (
    EAGLE_PROPOSER,
    backend_registrations,
    eagle_draft,
    line_key,
    mla_prefill_backends,
    model_registry,
    platform_class_paths,
    platform_classes,
    speculators,
)
from tools.vllm.startup import VllmStartup
from tools.vllm.unselected import (
    AutoSelection,
    named_elsewhere,
    selection_texts,
    unless_loaded,
)

NO_DRAFT_MODEL = {"ngram", "ngram_gpu", "suffix"}  # methods that load no draft model
# (module, why it runs, when): "server" for any server log, "v1"/"v0" for that engine
_PROCESSES = (
    (
        "entrypoints/openai/api_server.py",
        "the OpenAI API server, which `vllm serve` runs",
        "server",
    ),
    ("v1/engine/core.py", "the V1 engine core, a process every V1 server starts", "v1"),
    ("engine/llm_engine.py", "the V0 engine, in every V0 server", "v0"),
    ("v1/worker/gpu_worker.py", "the GPU worker of the V1 engine", "v1"),
    ("v1/worker/gpu_model_runner.py", "the V1 GPU model runner", "v1"),
    ("v1/worker/gpu/model_runner.py", "the GPU model runner (Model Runner V2)", "v2"),
    ("worker/worker.py", "the V0 GPU worker", "v0"),
    ("worker/model_runner.py", "the V0 GPU model runner", "v0"),
)
_MULTIPROC = "v1/executor/multiproc_executor.py"


def _engine(startup: VllmStartup, pkg: Path) -> str | None:
    """ "v0" or "v1" by the log (its engine line, an attention line's "on V1 engine", a V0
    fallback); a release with no V0 engine left runs V1; None where nothing tells."""
    if startup.engine == "V0" or startup.v0_fallback:
        return "v0"
    if startup.engine == "V1" or not (pkg / "engine/llm_engine.py").is_file():
        return "v1"
    return None


_PLATFORMS = {"cuda": "platforms/cuda.py", "hip": "platforms/rocm.py"}
_ENGINE_CLIENT = "v1/engine/async_llm.py"


def _platform(gpu: GpuInfo | None) -> str | None:
    return _PLATFORMS.get(gpu.vendor or "") if gpu is not None else None


@dataclass(frozen=True)
class _Group:
    """The platform vLLM resolves on the server's GPU, the device communicator modules it
    names, and the processes of a group (tensor_parallel_size × pipeline_parallel_size):
    read once, for the roots and for the texts the closure reads."""

    platform: str | None
    communicators: list[str]
    world: int | None

    @classmethod
    def read(cls, pkg: Path, startup: VllmStartup, gpu: GpuInfo | None) -> _Group:
        platform = _platform(gpu)
        communicators = (
            platform_class_paths(pkg, platform, "get_device_communicator_cls") if platform else []
        )
        return cls(platform, communicators, world_size(startup.args, startup.args_form))


def _platform_roots(pkg: Path, gpu: GpuInfo | None, group: _Group) -> dict[Path, str]:
    """The platform vLLM resolves on the server's GPU, and the device communicator it names."""
    platform = group.platform
    if platform is None or not (pkg / platform).is_file() or gpu is None:
        return {}
    found = {pkg / platform: f"the platform vLLM resolves on {gpu.describe()} ({gpu.source})"}
    for module in group.communicators:
        found[pkg / module] = f"the device communicator {platform} names"
    return found


def _roots_for(
    startup: VllmStartup, method: str | None, gpu: GpuInfo | None, group: _Group
) -> Roots:
    def roots(pkg: Path, log_text: str, serving: bool) -> dict[Path, str]:
        found: dict[Path, str] = {}
        if not serving:
            return found
        found |= _platform_roots(pkg, gpu, group)
        engine = _engine(startup, pkg)
        api = "vLLM API server version" in log_text or "APIServer" in startup.processes
        if api and engine == "v1" and (pkg / _ENGINE_CLIENT).is_file():
            found[pkg / _ENGINE_CLIENT] = "the V1 engine's client, which the API server runs"
        # Model Runner V2: the only GPU runner once the V1 runner's file is gone (0.34)
        v2 = startup.model_runner == "V2" or not (pkg / "v1/worker/gpu_model_runner.py").is_file()
        for module, why, when in _PROCESSES:
            wanted = when == "server" or when == engine or (when == "v2" and v2 and engine == "v1")
            if wanted and (pkg / module).is_file():
                found[pkg / module] = why
        workers = [p for p in startup.processes if p.startswith(("VllmWorker", "Worker_"))]
        if workers and (pkg / _MULTIPROC).is_file():
            found[pkg / _MULTIPROC] = (
                f"the multiprocessing executor: the log shows its worker processes ({workers[0]})"
            )
        speculator = speculators(pkg).get(method or "")
        if speculator:
            found[pkg / speculator] = f"the speculator of the engine config's method {method!r}"
        prefill = mla_prefill_backends(pkg)
        for line in (a for a in startup.attention if a.kind == "mla_prefill"):
            for module in prefill.get(line.backend, []):
                found.setdefault(pkg / module, f"log line {line.line}: {line.said}")
        return found

    return roots


def _communicator_roots(pkg: Path, group: _Group) -> dict[Path, str]:
    """Above one process per group, what the device communicator's `__init__` imports."""
    world = group.world
    if group.platform is None or world is None or world < 2:
        return {}
    return {
        target: (
            f"{communicator.relative_to(pkg)}:{line} imports it in the communicator's "
            f"__init__, built for groups of two or more (the args line: tensor_parallel_size x "
            f"pipeline_parallel_size = {world})"
        )
        for target, (communicator, line) in communicator_imports(pkg, group.communicators).items()
    }


def _selections(
    startup: VllmStartup, kind: str, known: set[str]
) -> tuple[list[list[str]], list[str]]:
    """The decoders' attention backends in the order the log selects them (a speculative run
    logs the draft's selection after the target's), each as one list; and how they were read."""
    chosen: list[list[str]] = []
    evidence: list[str] = []
    for line in (a for a in startup.attention if a.kind == "decoder"):
        key = line.backend if kind == "enum" else line_key(line.said)
        if key not in known:
            evidence.append(
                f"log line {line.line}: {line.said!r} names no backend this release builds"
            )
            continue
        if [key] not in chosen:
            chosen.append([key])
            evidence.append(f"log line {line.line} ({line.process or 'main'}): {line.said}")
    if not startup.attention:
        evidence.append("the log shows no attention-backend line")
    return chosen, evidence


def _draft(pkg: Path, startup: VllmStartup, spec: Speculative) -> tuple[str | None, list[str]]:
    method = (spec.method or "").lower()
    if len(startup.architectures) > 1:
        return startup.architectures[1], [
            f"the log's second `Resolved architecture:` line: {startup.architectures[1]}"
        ]
    if method in ("eagle", "eagle3") and (pkg / EAGLE_PROPOSER).is_file():
        name = eagle_draft(pkg, method)
        if name:
            return name, [f"{EAGLE_PROPOSER} builds {name} for method {method!r}"]
    return None, ["the draft model's architecture is not in the log"]


def read_servings(
    pkg: Path, startup: VllmStartup, architecture: str | None, kind: str, known: set[str]
) -> list[Serving]:
    """The target, then the draft where the engine config names a method with a draft model;
    the draft builds the backend of the log's second selection, else the target's."""
    target = startup.architectures[0] if startup.architectures else architecture
    chosen, said = _selections(startup, kind, known)
    why = (
        [f"the log's first `Resolved architecture:` line: {target}"]
        if startup.architectures
        else ([f"--arch {target}"] if target else ["the log names no architecture"])
    )
    backends = chosen[0] if chosen else []
    servings = [
        Serving(
            role="target", architecture=target, backends=backends, mla=None, evidence=[*why, *said]
        )
    ]
    spec = speculative(startup)
    method = (spec.method or "").lower() if spec else ""
    if spec is None or not method or method in NO_DRAFT_MODEL:
        return servings
    draft, how = _draft(pkg, startup, spec)
    servings.append(
        Serving(
            role="draft",
            architecture=draft,
            backends=chosen[1] if len(chosen) > 1 else backends,
            mla=None,
            evidence=[f"speculative method {method}", *how],
        )
    )
    return servings


def vllm_layout(startup: VllmStartup, gpu: GpuInfo | None, group: _Group) -> Layout:
    spec = speculative(startup)
    method = (spec.method or "").lower() if spec else None
    return Layout(
        server="vLLM",
        process_roots=_roots_for(startup, method, gpu, group),
        model_dirs=("model_executor/models", "models"),
        entry_points=("entrypoints/cli/main.py", "entrypoints/openai/api_server.py"),
        model_glob="**/*.py",
        args_name="the arguments",
    )


def classify_vllm(
    files: list[str],
    pkg: Path,
    startup: VllmStartup,
    architecture: str | None,
    gpu: GpuInfo | None,
    log_text: str,
) -> PathsReport:
    cache = SummaryCache(pkg)
    graph = ModuleGraph(pkg.parent, display_root=pkg, cache=cache)
    group = _Group.read(pkg, startup, gpu)
    registrations, kind = backend_registrations(pkg)
    known = {r.backend for r in registrations}
    servings = read_servings(pkg, startup, architecture, kind, known) if log_text else []
    registry = model_registry(pkg)
    served = {
        s.architecture: registry[s.architecture][0] if s.architecture in registry else None
        for s in servings
        if s.architecture
    }
    judge = Judge(
        graph=graph,
        pkg=pkg,
        registrations=registrations,
        servings=servings,
        server_args=startup.args or {},
        args_line=startup.args_line,
        gpu=gpu,
        served=served,
        log_text=log_text,
        layout=vllm_layout(startup, gpu, group),
    )
    auto = AutoSelection.read(pkg, startup, registrations, group.platform)
    roots = {**auto.roots, **judge.roots(), **_communicator_roots(pkg, group)}
    backend_files = {pkg / m for r in registrations for m in r.modules}
    judge.found = reach(graph, roots, gpu, skip=lambda importer, target: False)
    judge.stops = {f for f in backend_files - set(roots) if f not in judge.found.via}
    named = _closures(judge, startup, registrations, gpu, group) if servings else None
    relative = [(given, _relative(given, pkg)) for given in files]
    verdicts = [
        unless_loaded(judge.verdict(given, rel), rel, auto, named, pkg, backend_files)
        for given, rel in relative
    ]
    cache.save()
    return PathsReport(files=verdicts, gpu=gpu, servings=servings)


def _closures(
    judge: Judge,
    startup: VllmStartup,
    registrations: list[Registration],
    gpu: GpuInfo | None,
    group: _Group,
) -> Closure:
    """The judge's closure (every file the server could import), and the one the vLLM rules
    read: where the selections' class paths do not name anything (tools/vllm/unselected.py)."""
    pkg = judge.pkg
    judge.other_models = judge.other_model_files() | _other_model_packages(pkg, judge)
    starts = [*judge.found.via, *(pkg / e for e in judge.layout.entry_points)]
    values = [v for v in (startup.args or {}).values() if isinstance(v, str)]
    judge.closure = can_import(
        pkg.parent,
        package_texts(pkg),
        starts,
        lambda p: p not in judge.stops,
        values,
        named_only=judge.other_models,
    )
    judge.other_models &= judge.closure.listed
    # the registry's other models are blanked only where every served model's file is known
    served_files = {f for f in judge.served.values() if f} if judge.served_known else None
    spec = speculative(startup)
    # the speculative method picks one speculator: none where the args show no config
    method = (spec.method or "").lower() or None if spec else ("" if startup.args else None)
    texts = selection_texts(pkg, registrations, group.platform, served_files, method)
    texts = other_platform_blanked(texts, judge.graph, gpu)
    texts = other_subcommand_blanked(texts)
    texts = connectors_blanked(texts, pkg, startup.args, startup.args_form)
    texts = executor_blanked(texts, executor_backend(startup.args, startup.args_form))
    platform = group.platform
    if platform is not None and group.world == 1:
        texts = communicator_blanked(texts, pkg, group.communicators)
    if platform is not None:
        chosen = {b for s in judge.servings for b in s.backends}
        selected = {
            dotted_path(f"{pkg.name}/{m}")
            for r in registrations
            if r.backend in chosen
            for m in r.modules
        }
        texts = platform_choices_blanked(texts, pkg / platform, selected, _engine(startup, pkg))
    # other platforms' modules, as unselected backends, are not followed: what only they
    # name (their workers, their runners) runs only on their platform
    others = {pkg / m for m in platform_classes(pkg) if gpu and m != group.platform}
    return named_elsewhere(pkg, starts, texts, judge.stops, others, judge.other_models)


def _other_model_packages(pkg: Path, judge: Judge) -> set[Path]:
    """The registry's model files and 0.34's model packages (`vllm/models/<name>/`) that no
    import chain enters: they run only for their own models (the registry imports a model's
    module when it is served; a package's `__init__` picks its platform's code)."""
    if not judge.served_known:
        return set()
    reached = judge.found.via.keys() | judge.found.roots.keys()
    found: set[Path] = set()
    for init in sorted((pkg / "models").glob("*/__init__.py")):
        if init not in reached:
            found |= set(init.parent.rglob("*.py"))
    # the registry's other models: it names each by its module, and imports only the served
    served = {pkg / file for file in judge.served.values() if file}
    found |= {pkg / file for file, _ in model_registry(pkg).values()} - served - reached
    return found


def _relative(path: str, pkg: Path) -> str:
    """`vllm/v1/x.py`, `site-packages/vllm/v1/x.py` or `v1/x.py` -> `v1/x.py`."""
    inside = f"{pkg.name}/"
    if path.startswith(inside):
        return path[len(inside) :]
    if f"/{inside}" in path:
        return path[path.find(f"/{inside}") + len(inside) + 1 :]
    return path
