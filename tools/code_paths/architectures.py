"""What a release's own model config says about architectures: the names it gives a model
loaded as a speculative draft (`DeepseekV3ForCausalLM` -> `DeepseekV3ForCausalLMNextN`), and
which architectures get MLA attention (`self.attention_arch = AttentionArch.MLA`). Both are read
from `srt/configs/model_config.py` of the tree being judged, never from a table of ours: every
release adds models to both lists.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel

from tools.python_ast import parse_module

MODEL_CONFIG = "srt/configs/model_config.py"


class ArchitectureFacts(BaseModel):
    draft_renames: dict[str, str] = {}  # served architecture -> its name as a draft
    mla: list[str] = []  # architectures whose attention is MLA
    readable: bool = False  # the model config was found and parsed

    def is_mla(self, architecture: str | None) -> bool | None:
        if architecture is None or not self.readable:
            return None
        return architecture in self.mla


def _strings(node: ast.AST) -> list[str]:
    """The class names a test compares with (`"DeepseekV3ForCausalLM" in ...architectures`)."""
    return [
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and type(n.value) is str and n.value[:1].isupper()
    ]


def _mentions(node: ast.AST, name: str) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id == name)
        or (isinstance(n, ast.Attribute) and n.attr == name)
        for n in ast.walk(node)
    )


def _renamed_to(body: list[ast.stmt]) -> str | None:
    """`...architectures[0] = "NameNextN"` in a branch body: the new name."""
    for stmt in body:
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.targets[0], ast.Subscript)
            and _mentions(stmt.targets[0], "architectures")
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            return stmt.value.value
    return None


def _sets_mla(body: list[ast.stmt]) -> bool:
    return any(
        isinstance(stmt, ast.Assign)
        and any(isinstance(t, ast.Attribute) and t.attr == "attention_arch" for t in stmt.targets)
        and isinstance(stmt.value, ast.Attribute)
        and stmt.value.attr == "MLA"
        for stmt in body
    )


def _read(tree: ast.Module) -> ArchitectureFacts:
    renames: dict[str, str] = {}
    mla: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        renamed = _renamed_to(node.body)
        if renamed and _mentions(node.test, "is_draft_model"):
            for name in _strings(node.test):
                renames.setdefault(name, renamed)
        if _sets_mla(node.body) and _mentions(node.test, "architectures"):
            mla.update(_strings(node.test))
    return ArchitectureFacts(draft_renames=renames, mla=sorted(mla), readable=True)


@lru_cache(maxsize=8)
def architecture_facts(pkg: Path) -> ArchitectureFacts:
    path = pkg / MODEL_CONFIG
    try:
        return _read(parse_module(path.read_text(errors="replace")))
    except (OSError, SyntaxError, ValueError):
        return ArchitectureFacts()
