"""Where a server's code lives: what the path engine needs to know of one server's package.

The engine (imports, closure, verdicts) is the same for every server; what differs is which
modules certainly run (the processes every server of that kind starts), where its model files
are, and how it is started. SGLang's layout is here; vLLM's is tools/vllm/paths.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools.code_paths.branches import RUNNER
from tools.code_paths.elsewhere import server_texts
from tools.code_paths.serving import args_printer_root, http_server_root

# (package folder, the server's log text, whether the log is a server's) -> root -> why
Roots = Callable[[Path, str, bool], dict[Path, str]]


@dataclass(frozen=True)
class Layout:
    server: str  # as users name it: "SGLang", "vLLM"
    process_roots: Roots
    model_dirs: tuple[str, ...]  # package-relative folders of model files (one file, many classes)
    processor_dirs: tuple[str, ...] = ()  # multimodal processors, one per model family
    entry_points: tuple[str, ...] = ()  # how a server is started
    model_config: str = ""  # where the release says which architectures are MLA
    model_glob: str = "*.py"  # "**/*.py": model folders hold packages of their own
    args_name: str = "server_args"  # what its log calls the arguments it prints

    def is_model_file(self, rel: str) -> bool:
        if self.model_glob == "*.py":
            return Path(rel).parent.as_posix() in self.model_dirs
        return any(rel.startswith(f"{d}/") for d in self.model_dirs)


# the processes every SGLang server starts, each importing its module at least
SGLANG_PROCESSES = {
    "srt/managers/scheduler.py": "the scheduler, a process every SGLang server starts",
    "srt/managers/tokenizer_manager.py": "the tokenizer manager, in every SGLang server",
    "srt/managers/detokenizer_manager.py": "the detokenizer, a process every SGLang server starts",
}


def _sglang_roots(pkg: Path, log_text: str, serving: bool) -> dict[Path, str]:
    roots: dict[Path, str] = {}
    if (pkg / RUNNER).is_file():
        roots[pkg / RUNNER] = "the model runner, which every scheduler process imports"
    if serving:  # the log is a server's
        for module, why in SGLANG_PROCESSES.items():
            if (pkg / module).is_file():
                roots.setdefault(pkg / module, why)
    for path, why in http_server_root(pkg, log_text).items():
        roots.setdefault(path, why)
    for path, why in args_printer_root(pkg, log_text, server_texts(pkg)).items():
        roots.setdefault(path, why)
    return roots


SGLANG = Layout(
    server="SGLang",
    process_roots=_sglang_roots,
    model_dirs=("srt/models",),
    processor_dirs=("srt/multimodal/processors", "srt/managers/multimodal_processors"),
    # `python -m sglang.launch_server`, `sglang serve` (console script)
    entry_points=("launch_server.py", "cli/main.py", "__init__.py"),
    model_config="srt/configs/model_config.py",
)
