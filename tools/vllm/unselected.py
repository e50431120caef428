"""What keeps a backend the server did not select from being called off-path in vLLM.

Unlike SGLang, whose registry alone imports its backends, vLLM loads backends it does not use:
- automatic selection (0.10+, `platforms/cuda.py`) imports every backend of the platform's
  priority list to validate it; the log lists the valid ones ("out of potential backends:
  [...]"): those are on, and the rest of the list (for this kind of model) may have been
  imported too: unknown;
- code outside the backend registry names a backend's module (0.34's sampler imports
  FlashInfer inside a function on CUDA): it may run, so it is unknown, never off.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from tools.code_paths.branches import Registration
from tools.code_paths.closure import Closure, can_import
from tools.code_paths.definitions import dotted_path
from tools.code_paths.elsewhere import package_texts
from tools.code_paths.verdicts import FileVerdict
from tools.python_ast import parse_module
from tools.vllm.blanking import without_strings
from tools.vllm.selection import (
    PLATFORM_PLUGINS,
    REGISTRY,
    SPECULATORS,
    model_registry,
    platform_classes,
    speculators,
    validated_backends,
)
from tools.vllm.startup import VllmStartup


@dataclass
class AutoSelection:
    roots: dict[Path, str] = field(default_factory=dict)  # validated: listed by the log
    maybe: dict[str, str] = field(default_factory=dict)  # package-relative module -> why

    @classmethod
    def read(
        cls,
        pkg: Path,
        startup: VllmStartup,
        registrations: list[Registration],
        platform: str | None,
    ) -> AutoSelection:
        found = cls()
        if platform is None:
            return found
        modules = {r.backend: r.modules for r in registrations}
        # each model's selection (the target's, a draft's) lists the valid backends it tried
        for line in (a for a in startup.attention if a.kind == "decoder" and a.candidates):
            for name in line.candidates:
                for module in modules.get(name, []):
                    found.roots.setdefault(
                        pkg / module,
                        f"log line {line.line} lists {name} among the valid backends: automatic "
                        f"selection imports each one of the list to validate it ({platform})",
                    )
            mla = line.backend in validated_backends(pkg, platform, True)
            for name in sorted(validated_backends(pkg, platform, mla) - set(line.candidates)):
                for module in modules.get(name, []):
                    found.maybe.setdefault(
                        module,
                        f"{platform}'s _get_backend_priorities lists {name} for "
                        f"{'an MLA' if mla else 'a non-MLA'} model: automatic selection imports "
                        "it to validate it where this GPU's list holds it (the log lists only "
                        "the valid ones)",
                    )
        return found


def selection_texts(
    pkg: Path,
    registrations: list[Registration],
    platform: str | None,
    served: set[str] | None,
    method: str | None = None,
) -> dict[Path, str]:
    """The package's files, with the class paths that a selection picks one of (the attention
    registry's, the platform plugins' but the GPU's own, the model registry's but the served
    models', 0.34's speculators but the speculative `method`'s: "" for none, None unknown)
    blanked out where the selection names them: what else those files import is kept."""
    texts = dict(package_texts(pkg))
    picks: dict[Path, set[str]] = {}
    if method is not None:
        others = {m for name, m in speculators(pkg).items() if name != method}
        unpicked = {dotted_path(f"{pkg.name}/{m}") for m in others}
        for path in (pkg / SPECULATORS).rglob("*.py") if unpicked else []:
            picks.setdefault(path, set()).update(unpicked)
    for file, _ in model_registry(pkg).values():
        if served is not None and file not in served:
            picks.setdefault(pkg / REGISTRY, set()).add(dotted_path(f"{pkg.name}/{file}"))
    for r in registrations:
        for module in r.modules:
            picks.setdefault(pkg / r.source, set()).add(dotted_path(f"{pkg.name}/{module}"))
    for module, cls in platform_classes(pkg).items():
        if module != platform:
            picks.setdefault(pkg / PLATFORM_PLUGINS, set()).add(cls.rpartition(".")[0])
    for path, names in picks.items():
        if path in texts:
            texts[path] = _blanked(texts[path], names)
    return texts


def _blanked(text: str, modules: set[str]) -> str:
    """`text` with every string that names a class of `modules` (however it is split over
    implicitly joined literals) replaced by an empty one; line numbers kept."""
    try:
        tree = parse_module(text)
    except (SyntaxError, ValueError):
        return text
    return without_strings(
        text,
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and (node.value in modules or node.value.rpartition(".")[0] in modules)
        ),
    )


def named_elsewhere(
    pkg: Path,
    starts: list[Path],
    texts: dict[Path, str],
    stops: set[Path],
    other_platforms: set[Path],
    other_models: set[Path],
) -> Closure:
    """Every file that code the server can run names (imports at any level, strings), where
    a selection's class paths do not count (selection_texts). Unselected backends (`stops`)
    and other platforms' modules are not followed: what only they name runs only where they
    are chosen; but an unselected backend that followed code still names (a helper imported
    from it: 0.8's platform asks the V0 FlashMLA module whether FlashMLA is supported) is
    followed after all. Other models' code counts only where followed code names it."""
    while True:
        unfollowed = frozenset(stops | other_platforms)

        def followed(path: Path, unfollowed: frozenset[Path] = unfollowed) -> bool:
            return path not in unfollowed

        closure = can_import(pkg.parent, texts, starts, followed, named_only=other_models)
        named_stops = stops & closure.files
        if not named_stops:
            return closure
        stops = stops - named_stops


def unless_loaded(
    verdict: FileVerdict,
    rel: str,
    auto: AutoSelection,
    named: Closure | None,
    pkg: Path,
    backends: set[Path],
) -> FileVerdict:
    """An unselected backend's "off", kept only where nothing above may load it; an unknown
    file that nothing the server can run names, but a selection that picked another, off.
    `named` is None where it was not computed (no server log): nothing changes."""
    if named is None:
        return verdict
    if verdict.status == "unknown" and (pkg / rel).is_file() and pkg / rel not in named.files:
        return FileVerdict(
            path=verdict.path,
            status="off",
            evidence=[
                *verdict.evidence,
                "nothing the server can run names it (imports at any level, strings, computed "
                "names) but a selection that picked another: the attention registry or the "
                "platform plugins",
            ],
        )
    if verdict.status != "off" or pkg / rel not in backends:
        return verdict
    if rel in auto.maybe:
        return FileVerdict(
            path=verdict.path, status="unknown", evidence=[*verdict.evidence, auto.maybe[rel]]
        )
    if pkg / rel in named.files:
        by = named.named_by.get(pkg / rel, "code the server can run")
        return FileVerdict(
            path=verdict.path,
            status="unknown",
            evidence=[
                *verdict.evidence,
                f"{by} names it outside the backend registry and the platform's selection: an "
                "import inside a function may load it",
            ],
        )
    return verdict
