"""What a vLLM release's own source says it builds: the model registry, the attention
backends, the EAGLE drafts and the speculators. All read from the tree being judged, never
from a table of ours: every release moves them.

- models: `model_executor/models/registry.py`'s `_*_MODELS` dicts, `"Arch": ("module",
  "Class")`; a module is `vllm.model_executor.models.<module>`, or a full `vllm.` path (0.34's
  `vllm.models.<pkg>` packages, which pick their `nvidia/`, `amd/`... code at import time).
- attention: 0.10+'s `AttentionBackendEnum` (`v1/attention/backends/registry.py`), name -> class
  path; older releases name no backend in their log but the line the platform prints right
  before it returns the class path (`platforms/cuda.py`: `logger.info("Using Flash Attention
  backend on V1 engine.")` then `return "vllm.v1.attention.backends.flash_attn...."`): there the
  line as printed is the key.
- drafts: 0.8's V1 EAGLE proposer builds a fixed class per method (`v1/spec_decode/eagle.py`);
  0.34's speculators are named by `speculator_class` per `base_method`.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from tools.code_paths.branches import Registration
from tools.errors import ToolError
from tools.python_ast import parse_module
from tools.vllm.attention import attention_line

REGISTRY = "model_executor/models/registry.py"
BACKENDS = "v1/attention/backends/registry.py"
PLATFORM_FILES = ("platforms/cuda.py", "platforms/rocm.py")
EAGLE_PROPOSER = "v1/spec_decode/eagle.py"
SPECULATORS = "v1/worker/gpu/spec_decode"


def vllm_package(repo: Path) -> Path:
    """The `vllm` package folder inside a checkout, an unpacked wheel, or itself."""
    if not repo.is_dir():
        raise ToolError(f"{repo} is not a folder (--repo wants a vLLM checkout or unpacked wheel)")
    for candidate in (repo / "vllm", repo):
        if (candidate / REGISTRY).is_file():
            return candidate
    raise ToolError(f"{repo} is not a vLLM source tree ({REGISTRY} not found)")


def parse_path(path: Path) -> ast.Module | None:
    """The module at `path`, or None where it cannot be read or parsed."""
    try:
        return parse_module(path.read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None


def module_file(pkg: Path, dotted: str) -> str | None:
    """`vllm.a.b` -> `a/b.py` or `a/b/__init__.py` (package-relative), when it exists."""
    parts = dotted.split(".")
    if not parts or parts[0] != pkg.name:
        return None
    rel = "/".join(parts[1:])
    for candidate in (f"{rel}.py", f"{rel}/__init__.py"):
        if (pkg / candidate).is_file():
            return candidate
    return None


def class_module(pkg: Path, qualname: str) -> str | None:
    """`vllm.v1.attention.backends.flash_attn.FlashAttentionBackend` -> its module's file."""
    return module_file(pkg, qualname.rsplit(".", 1)[0]) if "." in qualname else None


@lru_cache(maxsize=8)
def model_registry(pkg: Path) -> dict[str, tuple[str, str]]:
    """Architecture -> (its model file, the registry's line for it)."""
    tree = parse_path(pkg / REGISTRY)
    found: dict[str, tuple[str, str]] = {}
    for node in tree.body if tree else []:
        target = node.targets[0] if isinstance(node, ast.Assign) and node.targets else None
        name = target.id if isinstance(target, ast.Name) else ""
        value = node.value if isinstance(node, ast.Assign) else None
        if not (name.startswith("_") and name.endswith("_MODELS") and isinstance(value, ast.Dict)):
            continue
        for key, item in zip(value.keys, value.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(item, ast.Tuple) and item.elts):
                continue
            module = item.elts[0]
            if not (isinstance(module, ast.Constant) and isinstance(module.value, str)):
                continue
            dotted = module.value
            if not dotted.startswith(f"{pkg.name}."):
                dotted = f"{pkg.name}.model_executor.models.{dotted}"
            file = module_file(pkg, dotted)
            if file and isinstance(key.value, str):
                found.setdefault(key.value, (file, f"{REGISTRY}:{key.lineno} ({name})"))
    return found


def _enum_backends(
    pkg: Path, source: str = BACKENDS, enum: str = "AttentionBackendEnum"
) -> list[Registration]:
    tree = parse_path(pkg / source)
    found = []
    for node in ast.walk(tree) if tree else []:
        if not (isinstance(node, ast.ClassDef) and node.name == enum):
            continue
        for item in node.body:
            if not (isinstance(item, ast.Assign) and isinstance(item.targets[0], ast.Name)):
                continue
            try:
                path = ast.literal_eval(item.value)
            except ValueError:
                continue
            module = class_module(pkg, path) if isinstance(path, str) else None
            name = item.targets[0].id
            found.append(
                Registration(
                    backend=name,
                    source=source,
                    line=item.lineno,
                    selector=f"{enum}.{name} = {path!r}",
                    modules=[module] if module else [],
                )
            )
    return found


def _said(call: ast.stmt) -> str | None:
    """The constant text a `logger.info(...)` / `info_once(...)` statement prints."""
    if not (isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)):
        return None
    func, args = call.value.func, call.value.args
    if not (isinstance(func, ast.Attribute) and func.attr in ("info", "info_once", "warning")):
        return None
    if len(args) == 1 and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
        return args[0].value
    return None


def _returned(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Return) and stmt.value is not None:
        try:
            value = ast.literal_eval(stmt.value)
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    return None


def line_key(said: str) -> str:
    """How an older release's log names a backend: `FLASH_ATTN (V1 engine)` for "Using Flash
    Attention backend on V1 engine.", the same for the line in the source and in the log."""
    chosen = attention_line(0, "", said.strip())
    if chosen is None:
        return said.strip()
    return f"{chosen.backend} (V1 engine)" if chosen.engine == "V1" else chosen.backend


def _printed_backends(pkg: Path) -> list[Registration]:
    found = []
    for rel in PLATFORM_FILES:
        tree = parse_path(pkg / rel)
        blocks = [
            block
            for node in (ast.walk(tree) if tree else [])
            for block in (getattr(node, "body", None), getattr(node, "orelse", None))
            if isinstance(block, list)
        ]
        for body in blocks:
            for said_stmt, return_stmt in zip(body, body[1:], strict=False):
                said, path = _said(said_stmt), _returned(return_stmt)
                module = class_module(pkg, path) if said and path else None
                if said and module:
                    found.append(
                        Registration(
                            backend=line_key(said),
                            source=rel,
                            line=said_stmt.lineno,
                            selector=f"prints {said.strip()!r}, then returns {path}",
                            modules=[module],
                        )
                    )
    return found


@lru_cache(maxsize=8)
def backend_registrations(pkg: Path) -> tuple[list[Registration], str]:
    """Every attention backend the release can build, and how the log names one: "enum" (the
    registry's names) or "line" (the line the platform prints)."""
    enum = _enum_backends(pkg)
    return (enum, "enum") if enum else (_printed_backends(pkg), "line")


def platform_class_paths(pkg: Path, platform: str, method: str) -> list[str]:
    """The class paths a platform's method returns (`get_device_communicator_cls`), as
    package-relative module files."""
    tree = parse_path(pkg / platform)
    found = []
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, ast.FunctionDef) and node.name == method:
            for stmt in ast.walk(node):
                path = _returned(stmt) if isinstance(stmt, ast.Return) else None
                module = class_module(pkg, path) if path else None
                if module:
                    found.append(module)
    return found


def validated_backends(pkg: Path, platform: str, mla: bool) -> set[str]:
    """0.10+'s automatic selection imports every backend of the platform's priority list to
    validate it (`_get_backend_priorities`): the enum names it can list for an MLA model or
    for any other (its `if use_mla:` branch and the rest)."""
    tree = parse_path(pkg / platform)
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, ast.FunctionDef) and node.name == "_get_backend_priorities":
            branch = next(
                (
                    b
                    for b in node.body
                    if isinstance(b, ast.If)
                    and isinstance(b.test, ast.Name)
                    and b.test.id == "use_mla"
                ),
                None,
            )
            scope: list[ast.AST] = (
                [node] if branch is None else list(branch.body if mla else branch.orelse)
            )
            if branch is not None and not mla:  # what follows the `if use_mla:` block too
                scope += [b for b in node.body if b is not branch]
            return {
                n.attr
                for part in scope
                for n in ast.walk(part)
                if isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id == "AttentionBackendEnum"
            }
    return set()


PLATFORM_PLUGINS = "platforms/__init__.py"


def platform_classes(pkg: Path) -> dict[str, str]:
    """The platforms' class paths the plugins of platforms/__init__.py return, by module:
    vLLM resolves one of them, the platform it detects."""
    tree = parse_path(pkg / PLATFORM_PLUGINS)
    found: dict[str, str] = {}
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if text.startswith(f"{pkg.name}.platforms.") and text.endswith("Platform"):
                module = class_module(pkg, text)
                if module:
                    found[module] = text
    return found


MLA_PREFILL = "v1/attention/backends/mla/prefill/registry.py"


def mla_prefill_backends(pkg: Path) -> dict[str, list[str]]:
    """0.34's MLA prefill backends (`MLAPrefillBackendEnum`): name -> module."""
    return {r.backend: r.modules for r in _enum_backends(pkg, MLA_PREFILL, "MLAPrefillBackendEnum")}


def eagle_draft(pkg: Path, method: str) -> str | None:
    """0.8's V1 EAGLE proposer: the one draft class it imports for `method` (eagle / eagle3)."""
    tree = parse_path(pkg / EAGLE_PROPOSER)
    names = [
        alias.name
        for node in (tree.body if tree else [])
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("Eagle") and alias.name.endswith("ForCausalLM")
    ]
    wanted = [n for n in names if n.startswith("Eagle3") == (method.lower() == "eagle3")]
    return wanted[0] if len(wanted) == 1 else None


@lru_cache(maxsize=8)
def speculators(pkg: Path) -> dict[str, str]:
    """0.34+: speculative method -> the module of its speculator class."""
    classes: dict[str, tuple[str | None, str | None, list[str]]] = {}
    for path in sorted((pkg / SPECULATORS).rglob("*.py")):
        tree = parse_path(path)
        for node in tree.body if tree else []:
            if not isinstance(node, ast.ClassDef):
                continue
            method = speculator = None
            for item in node.body:
                if isinstance(item, ast.Assign) and isinstance(item.targets[0], ast.Name):
                    try:
                        value = ast.literal_eval(item.value)
                    except ValueError:
                        continue
                    if item.targets[0].id == "base_method" and isinstance(value, str):
                        method = value
                    if item.targets[0].id == "speculator_class" and isinstance(value, str):
                        speculator = value
            bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
            classes[node.name] = (method, speculator, bases)
    found: dict[str, str] = {}
    for method, speculator, bases in classes.values():
        seen = 0
        while speculator is None and bases and seen < 8:  # inherited from its base config
            _, speculator, bases = classes.get(bases[0], (None, None, []))
            seen += 1
        module = class_module(pkg, speculator) if speculator else None
        if method and module:
            found.setdefault(method, module)
    return found
