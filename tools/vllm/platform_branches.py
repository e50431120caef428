"""Code that runs only on another platform, taken out of what the server can name.

vLLM keeps each platform's paths in the shared code: `if current_platform.is_rocm(): from
vllm.platforms.rocm import ...` inside functions that run everywhere. A branch whose test the
server's GPU decides against (tools/gpu/guards.py) never runs there, so what only it imports
is not named by the server; the text of such a branch is blanked before the closure reads the
package (line numbers kept), and a branch decided for the GPU blanks its `else`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tools.code_paths.imports import lookup_in
from tools.code_paths.modules import ModuleGraph
from tools.gpu.guards import decide
from tools.gpu.info import GpuInfo

# a cheap test first: only files that ask about the platform are parsed
_ASKS = re.compile(r"\bis_(?:rocm|hip|xpu|cpu|tpu|cuda|cuda_alike)\b|_is_hip\b")


def _blank_lines(lines: list[str], body: list[ast.stmt]) -> None:
    if not body:
        return
    start, end = body[0].lineno, body[-1].end_lineno or body[-1].lineno
    for n in range(start - 1, min(end, len(lines))):
        lines[n] = ""


def other_platform_blanked(
    texts: dict[Path, str], graph: ModuleGraph, gpu: GpuInfo | None
) -> dict[Path, str]:
    """`texts` with the branches this GPU never takes blanked."""
    if gpu is None or gpu.vendor is None:
        return texts
    out = dict(texts)
    for path, text in texts.items():
        if not _ASKS.search(text):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        lines = text.split("\n")
        lookup = lookup_in(graph, path)
        changed = False
        for node in ast.walk(tree):
            if not isinstance(node, ast.If) or not _ASKS.search(ast.unparse(node.test)):
                continue
            value = decide(node.test, lookup, gpu).value
            if value is None:
                continue
            _blank_lines(lines, node.orelse if value else node.body)
            changed = True
        if changed:
            out[path] = "\n".join(lines)
    return out
