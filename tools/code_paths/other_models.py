"""Files of models the server does not serve: the model files, and the multimodal processors
built for them.

SGLang's model registry imports every file of `srt/models/` and its processor registry every
processor (`srt/multimodal/processors/`, 0.4's `srt/managers/multimodal_processors/`), but the
server builds only the classes of the models it serves, and the processor whose `models` lists
one of them. A model file no import chain reaches that defines only other models, and a
processor that names only such model files, do not run past their module level; closure.py does
not follow them, so what only they import is off too. Where code that is followed names one of
them (a function importing a class of it), it may run, and evidence.py follows it after all.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tools.code_paths.closure import mentions
from tools.code_paths.modules import ModuleGraph, dotted_name

PROCESSOR_FOLDERS = ("srt/multimodal/processors", "srt/managers/multimodal_processors")


def defined_models(graph: ModuleGraph, path: Path) -> list[str]:
    """The model classes (`...For...`) a file defines at its top level."""
    summary = graph.summary(path) if path.is_file() else None
    return sorted(c for c in (summary.classes if summary else []) if "For" in c)


def other_models(
    pkg: Path,
    graph: ModuleGraph,
    reached: Iterable[Path],
    texts: dict[Path, str],
    model_dirs: tuple[str, ...] = ("srt/models",),
    processor_dirs: tuple[str, ...] = PROCESSOR_FOLDERS,
    pattern: str = "*.py",
) -> set[Path]:
    """The model files no import chain reaches that define only models other than the served
    ones (each served model's file is reached), and the processors naming only those.
    `texts`: the package's Python files."""
    reached = set(reached)
    models = {
        path
        for folder in model_dirs
        for path in sorted((pkg / folder).glob(pattern))
        if path not in reached and defined_models(graph, path)
    }
    others = {dotted_name(pkg.parent, path) for path in models}
    processors = set()
    prefix = f"{pkg.name}.{model_dirs[0].replace('/', '.')}."
    for folder in processor_dirs:
        for path in sorted((pkg / folder).glob("*.py")):
            if path in reached or path not in texts:
                continue
            said = mentions(texts[path], dotted_name(pkg.parent, path), False).names
            named = {prefix + n[len(prefix) :].split(".")[0] for n in said if n.startswith(prefix)}
            if named and named <= others:
                processors.add(path)
    return models | processors
