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
from tools.paths_branches import ATTENTION_PKG, RUNNER, Registration, module_file, read_branches

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
        if (candidate / REGISTRY).exists() or (candidate / RUNNER).exists():
            return candidate
    raise ToolError(f"{repo} is not an SGLang source tree (neither {REGISTRY} nor {RUNNER} "
                    "found)")


def read_registry(pkg: Path) -> list[Registration]:
    """0.5.x: the `@register_attention_backend(name)` factories and the modules they import."""
    tree = ast.parse((pkg / REGISTRY).read_text())
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            if (isinstance(deco, ast.Call) and getattr(deco.func, "id", "") ==
                    "register_attention_backend" and deco.args
                    and isinstance(deco.args[0], ast.Constant)):
                modules = sorted({module_file(imp.module or "") for imp in ast.walk(node)
                                  if isinstance(imp, ast.ImportFrom)
                                  and (imp.module or "").startswith(ATTENTION_PKG)})
                found.append(Registration(backend=str(deco.args[0].value), source=REGISTRY,
                                          line=deco.lineno, selector=f"@{ast.unparse(deco)}",
                                          modules=modules))
    return found


def read_selection(pkg: Path) -> list[Registration]:
    """How this tree picks its attention backend: the registry, or an older layout's branches."""
    return read_registry(pkg) if (pkg / REGISTRY).exists() else read_branches(pkg)


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


def _backend_evidence(rel: str, users: list[Registration], active: set[str],
                      server_args: dict) -> tuple[list[str], Literal["on", "off", "unknown"]]:
    """The selections that use `rel`, and whether one of the active backends really does."""
    evidence, status = [], "off"
    for r in users:
        condition = next((c for c in r.conditional if c.module == rel), None)
        if condition is None:
            evidence.append(f"{r.source}:{r.line}: {r.selector} uses {rel}")
            status = "on" if r.backend in active else status
            continue
        evidence.append(f"{r.source}:{r.line}: {r.selector} uses {rel} only "
                        f"{'if' if condition.when else 'if not'} {condition.test}")
        if r.backend in active and status != "on":
            holds = condition.holds(server_args)
            if holds is not None:
                evidence.append(f"the log's server_args has {condition.flag}="
                                f"{server_args[condition.flag]!r}")
            status = "unknown" if holds is None else ("on" if holds else status)
    return evidence, status  # type: ignore[return-value]


def classify(files: list[str], pkg: Path, server_args: dict | None,
             args_line: int | None, architecture: str | None) -> PathsReport:
    registrations = read_selection(pkg)
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
        users = sorted((r for r in registrations if rel in r.modules
                        or any(c.module == rel for c in r.conditional)),
                       key=lambda r: (r.backend not in active, r.line))
        if users and active:
            evidence, status = _backend_evidence(rel, users, active, server_args or {})
            evidence.append(f"the server resolved {resolved}{where}")
            verdicts.append(FileVerdict(path=given, status=status, evidence=evidence))
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
