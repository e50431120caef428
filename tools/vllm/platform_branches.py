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

from tools.code_paths.cache import SummaryCache
from tools.code_paths.definitions import statements
from tools.code_paths.imports import lookup_in
from tools.code_paths.modules import ModuleGraph, expression
from tools.gpu.guards import decide
from tools.gpu.info import GpuInfo
from tools.vllm.blanking import (
    Blanked,
    Span,
    blank_span,
    parse_text,
    plain_functions,
    span,
    without_dead_functions,
    without_strings,
)

_ASKS = re.compile(
    r"\bis_(?:rocm|hip|xpu|cpu|tpu|cuda|cuda_alike|xccl_available)\b|_is_hip\b|xpu\.is_available"
)
# a cheap test first: only files that may ask about the platform are read. A leading literal
# lets the regex engine skip to each `is_` (40 times faster over a package than `_ASKS`)
_MAY_ASK = re.compile(r"is_(?:(?:rocm|hip|xpu|cpu|tpu|cuda|cuda_alike|xccl_available)\b|available)")
_FACTS = "platform-ifs"


def other_platform_blanked(
    texts: dict[Path, str], graph: ModuleGraph, gpu: GpuInfo | None
) -> dict[Path, str]:
    """`texts` with the branches this GPU never takes blanked, and the functions only they
    used."""
    if gpu is None or gpu.vendor is None:
        return texts
    blanked: dict[Path, Blanked] = {}
    for path, text in texts.items():
        facts = _facts(path, text, graph.cache) if _MAY_ASK.search(text) else None
        if facts is None:
            continue
        lines = text.split("\n")
        lookup = lookup_in(graph, path)
        changed = False
        for test, body, orelse in facts["ifs"]:
            value = decide(expression(test), lookup, gpu).value
            if value is not None:
                blank_span(lines, _span(orelse if value else body))
                changed = True
        if changed:
            functions = [(name, (first, last)) for name, first, last in facts["functions"]]
            blanked[path] = (lines, functions, text)
    return without_dead_functions(texts, blanked)


def _facts(path: Path, text: str, cache: SummaryCache | None) -> dict | None:
    """What the rule reads of a module: each `if` asking about the platform (its test, its
    body's and its else's lines) and the plain functions. Kept between runs, as the module
    summaries are: parsing every file that asks is most of the cost."""
    facts = cache.get_for_text(path, _FACTS, text) if cache else None
    if facts is not None:
        return facts
    tree = parse_text(text)
    if tree is None:
        return None
    ifs = [node for node in statements(tree.body) if isinstance(node, ast.If)]
    tests = ((node, ast.unparse(node.test)) for node in ifs)
    facts = {
        "ifs": [
            [test, span(node.body), span(node.orelse)] for node, test in tests if _ASKS.search(test)
        ],
        "functions": [[name, *lines] for name, lines in plain_functions(tree)],
    }
    if cache:
        cache.put_for_text(path, _FACTS, text, facts)
    return facts


def _span(lines: list[int] | None) -> Span | None:
    return (lines[0], lines[1]) if lines else None


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
    picked_out: list[ast.Constant] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "get_attn_backend_cls":
            picked_out += [
                c for v, c in _class_strings(node) if v.rpartition(".")[0] not in selected
            ]
        targets = node.targets if isinstance(node, ast.Assign) else []
        if engine and any(
            isinstance(t, ast.Attribute) and t.attr in ("worker_cls", "sd_worker_cls")
            for t in targets
        ):
            picked_out += [
                c for v, c in _class_strings(node) if v.startswith("vllm.v1.") != (engine == "v1")
            ]
    return {**texts, path: without_strings(text, picked_out)}
