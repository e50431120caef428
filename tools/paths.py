"""Which files of an SGLang source tree the server runs, from its startup log and the source.

The attention backend the log's server_args resolved is mapped to its module(s) through the
target's own `attention_registry.py` (the `@register_attention_backend(name)` factories and the
modules they import), never through a table of ours; the model architecture is mapped to the
model file that defines its class.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from tools.errors import ToolError

REGISTRY = "srt/layers/attention/attention_registry.py"
ATTENTION_KEYS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")


class FileVerdict(BaseModel):
    path: str
    status: Literal["on", "off", "unknown"]
    evidence: list[str]


class PathsReport(BaseModel):
    files: list[FileVerdict]


def package_root(repo: Path) -> Path:
    """The `sglang` package folder inside a checkout, an unpacked wheel, or itself."""
    for candidate in (repo / "python" / "sglang", repo / "sglang", repo):
        if (candidate / REGISTRY).exists():
            return candidate
    raise ToolError(f"{repo} is not an SGLang source tree (no {REGISTRY} found)")


class Registration(BaseModel):
    backend: str
    line: int  # the decorator's line in attention_registry.py
    modules: list[str]  # package-relative files the factory imports


def read_registry(pkg: Path) -> list[Registration]:
    tree = ast.parse((pkg / REGISTRY).read_text())
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            if (isinstance(deco, ast.Call) and getattr(deco.func, "id", "") ==
                    "register_attention_backend" and deco.args
                    and isinstance(deco.args[0], ast.Constant)):
                modules = sorted({
                    "srt/" + imp.module.removeprefix("sglang.srt.").replace(".", "/") + ".py"
                    for imp in ast.walk(node) if isinstance(imp, ast.ImportFrom)
                    and (imp.module or "").startswith("sglang.srt.layers.attention.")})
                found.append(Registration(backend=str(deco.args[0].value), line=deco.lineno,
                                          modules=modules))
    return found


def _relative(path: str, pkg: Path) -> str:
    """`python/sglang/srt/x.py`, `sglang/srt/x.py`, `srt/x.py` or `x.py` under srt/: `srt/x.py`."""
    at = path.find("srt/")
    if at >= 0:
        return path[at:]
    return f"srt/{path}" if (pkg / "srt" / path).exists() else path


def _model_classes(pkg: Path) -> dict[str, str]:
    """Architecture class name -> package-relative model file that defines it."""
    classes: dict[str, str] = {}
    for path in sorted((pkg / "srt" / "models").glob("*.py")):
        try:
            tree = ast.parse(path.read_text(errors="replace"))
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and "For" in node.name:
                classes.setdefault(node.name, f"srt/models/{path.name}")
    return classes


def classify(files: list[str], pkg: Path, server_args: dict | None,
             args_line: int | None, architecture: str | None) -> PathsReport:
    registrations = read_registry(pkg)
    active = {str(server_args[k]) for k in ATTENTION_KEYS
              if server_args and server_args.get(k) not in (None, "")}
    where = f" (log line {args_line})" if args_line else ""
    resolved = ", ".join(f"{k}={server_args[k]!r}" for k in ATTENTION_KEYS
                         if server_args and server_args.get(k) is not None) or "none"
    classes = _model_classes(pkg) if architecture else {}
    served_file = classes.get(architecture or "")
    verdicts = []
    for given in files:
        rel = _relative(given, pkg)
        users = sorted((r for r in registrations if rel in r.modules),
                       key=lambda r: (r.backend not in active, r.line))
        evidence = []
        if users and active:
            on = [r for r in users if r.backend in active]
            for r in users:
                evidence.append(f"{REGISTRY}:{r.line}: @register_attention_backend("
                                f"{r.backend!r}) imports {rel}")
            evidence.append(f"the server resolved {resolved}{where}")
            verdicts.append(FileVerdict(path=given, status="on" if on else "off",
                                        evidence=evidence))
        elif rel.startswith("srt/models/") and served_file:
            defined = sorted(name for name, f in classes.items() if f == rel)
            status = "on" if rel == served_file else ("off" if defined else "unknown")
            verdicts.append(FileVerdict(path=given, status=status, evidence=[
                f"{rel} defines {', '.join(defined) or 'no model class'}",
                f"the server runs {architecture} (defined in {served_file})"]))
        else:
            verdicts.append(FileVerdict(path=given, status="unknown", evidence=[
                "neither a registered attention backend module nor a model file"
                if server_args else "no server_args in the log to judge against"]))
    return PathsReport(files=verdicts)
