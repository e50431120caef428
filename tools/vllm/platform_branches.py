"""Code that runs only on another platform, taken out of what the server can name.

vLLM keeps each platform's paths in the shared code: `if current_platform.is_rocm(): from
vllm.platforms.rocm import ...` inside functions that run everywhere. A branch whose test the
server's GPU decides against (tools/gpu/guards.py) never runs there, so what only it imports
is not named by the server; the text of such a branch is blanked before the closure reads the
package (line numbers kept), and a branch decided for the GPU blanks its `else`. A function that
only such a branch used (`rocm_unquantized_gemm`, returned where `current_platform.is_rocm()`)
is dead on this GPU once its name appears nowhere else in the package: its body is blanked too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tools.code_paths.imports import lookup_in
from tools.code_paths.modules import ModuleGraph
from tools.gpu.guards import decide
from tools.gpu.info import GpuInfo
from tools.vllm.blanking import blank, parse_text, parsed, without_dead_functions

# a cheap test first: only files that ask about the platform are parsed
_ASKS = re.compile(
    r"\bis_(?:rocm|hip|xpu|cpu|tpu|cuda|cuda_alike|xccl_available)\b|_is_hip\b|xpu\.is_available"
)


def other_platform_blanked(
    texts: dict[Path, str], graph: ModuleGraph, gpu: GpuInfo | None
) -> dict[Path, str]:
    """`texts` with the branches this GPU never takes blanked, and the functions only they
    used."""
    if gpu is None or gpu.vendor is None:
        return texts
    blanked: dict[Path, tuple[list[str], ast.Module, str]] = {}
    for path, text, tree in parsed(texts, _ASKS.search):
        lines = text.split("\n")
        lookup = lookup_in(graph, path)
        changed = False
        for node in ast.walk(tree):
            if not isinstance(node, ast.If) or not _ASKS.search(ast.unparse(node.test)):
                continue
            value = decide(node.test, lookup, gpu).value
            if value is None:
                continue
            blank(lines, node.orelse if value else node.body)
            changed = True
        if changed:
            blanked[path] = (lines, tree, text)
    return without_dead_functions(texts, blanked)


def _class_strings(node: ast.AST) -> list[tuple[str, ast.Constant]]:
    """The `vllm.` dotted strings under `node`, with their nodes."""
    return [
        (n.value, n)
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("vllm.")
    ]


def platform_choices_blanked(
    texts: dict[Path, str], path: Path, selected: set[str], engine: str | None
) -> dict[Path, str]:
    """The platform file with the class paths it picks one of blanked but the ones picked:
    `get_attn_backend_cls` returns one backend (the log's: its module in `selected`), and
    `check_and_update_config` sets one worker class per engine (the log's engine: V1 classes
    live under `vllm.v1.`)."""
    text = texts.get(path)
    if text is None:
        return texts
    tree = parse_text(text)
    if tree is None:
        return texts
    blank: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "get_attn_backend_cls":
            for value, const in _class_strings(node):
                if value.rpartition(".")[0] not in selected:
                    blank.add(ast.get_source_segment(text, const) or "")
        targets = node.targets if isinstance(node, ast.Assign) else []
        if engine and any(
            isinstance(t, ast.Attribute) and t.attr in ("worker_cls", "sd_worker_cls")
            for t in targets
        ):
            for value, const in _class_strings(node):
                if value.startswith("vllm.v1.") != (engine == "v1"):
                    blank.add(ast.get_source_segment(text, const) or "")
    for segment in sorted(blank - {""}, key=len, reverse=True):
        text = text.replace(segment, "''" + "\n" * segment.count("\n"))
    return {**texts, path: text}
