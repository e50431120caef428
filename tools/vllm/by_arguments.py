"""What the server's arguments select, read from the log's args line.

- The KV connector: `KVConnectorFactory.register_connector(name, module, class)` names every
  connector's module by string; only `kv_transfer_config`'s connector is imported. With the
  argument unset, none is (0.8's `PyNcclConnector` module is what named `pynccl.py`).
- The device communicator: the platform's communicator class is built only for a group of two
  or more processes (`GroupCoordinator`: `world_size > 1`), and the modules its `__init__`
  imports (0.8's custom all-reduce, PyNCCL) run only then. With tensor_parallel_size ×
  pipeline_parallel_size of 1 they are not imported by it; above 1 they run.
- The executor: `distributed_executor_backend`, or "uni" for a group of one; the branches
  comparing with another backend's name (0.8's `Executor.get_class` imports the multiprocessing
  executor for "mp") are blanked.

A value the args line does not show is unknown and selects nothing: "non-default args" omit
defaults (1, None), a Namespace shows every one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from tools.vllm.blanking import blank, parse_text, parsed, without_strings
from tools.vllm.selection import module_file, parse_path

FACTORY = "distributed/kv_transfer/kv_connector/factory.py"
_CONNECTOR = re.compile(r"kv_connector['\"]?\s*[:=]\s*['\"]?(\w+)")


def _arg(args: dict[str, Any] | None, form: str | None, name: str, default: object) -> object:
    """The argument's value; its default where a non-default listing omits it; None unknown."""
    if args is None:
        return None
    if name in args:
        return args[name]
    return default if form == "non-default" else None


def world_size(args: dict[str, Any] | None, form: str | None) -> int | None:
    """tensor_parallel_size × pipeline_parallel_size, where the args show both (or omit a
    default)."""
    sizes = [_arg(args, form, n, 1) for n in ("tensor_parallel_size", "pipeline_parallel_size")]
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in sizes):
        return None
    return int(sizes[0]) * int(sizes[1])  # type: ignore[call-overload]


def connectors_blanked(
    texts: dict[Path, str], pkg: Path, args: dict[str, Any] | None, form: str | None
) -> dict[Path, str]:
    """The factory's connector modules blanked but the one `kv_transfer_config` names (all of
    them where it is unset); `texts` as it is where the args do not tell."""
    path = pkg / FACTORY
    config = _arg(args, form, "kv_transfer_config", None)
    if (
        args is None
        or path not in texts
        or (args and "kv_transfer_config" not in args and form != "non-default")
    ):
        return texts
    chosen = _CONNECTOR.search(str(config)) if config is not None else None
    if config is not None and chosen is None:
        return texts  # set, but not readable here: any connector may be the one
    text = texts[path]
    tree = parse_text(text)
    unchosen: list[ast.expr] = []
    for node in ast.walk(tree) if tree else []:
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "register_connector"
            and len(node.args) >= 2
            and all(isinstance(a, ast.Constant) for a in node.args[:2])
        ):
            continue
        name, module = node.args[0], node.args[1]
        if chosen is None or name.value != chosen.group(1):  # type: ignore[attr-defined]
            unchosen.append(module)
    return {**texts, path: without_strings(text, unchosen)}


def _init_imports(tree: ast.Module) -> list[ast.ImportFrom | ast.Import]:
    """The imports inside the `__init__` of the module's classes."""
    found: list[ast.ImportFrom | ast.Import] = []
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for init in (f for f in cls.body if isinstance(f, ast.FunctionDef)):
            if init.name == "__init__":
                found += [n for n in ast.walk(init) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return found


def communicator_imports(pkg: Path, communicators: list[str]) -> dict[Path, tuple[Path, int]]:
    """What the communicator classes' `__init__` imports: module file -> (communicator, line)."""
    found: dict[Path, tuple[Path, int]] = {}
    for module in communicators:
        tree = parse_path(pkg / module)
        for node in _init_imports(tree) if tree else []:
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                target = module_file(pkg, name)
                if target is not None:
                    found.setdefault(pkg / target, (pkg / module, node.lineno))
    return found


def communicator_blanked(
    texts: dict[Path, str], pkg: Path, communicators: list[str]
) -> dict[Path, str]:
    """The communicator classes' `__init__` imports blanked (a group of one builds none)."""
    out = dict(texts)
    for module in communicators:
        path = pkg / module
        tree = parse_path(path)
        if path not in out or tree is None:
            continue
        lines = out[path].split("\n")
        for node in _init_imports(tree):
            blank(lines, [node])
        out[path] = "\n".join(lines)
    return out


def executor_backend(args: dict[str, Any] | None, form: str | None) -> str | None:
    """The executor the engine picks: the argument where set, "uni" for a group of one (the
    config's default then); None where it depends on more (Ray, a placement group)."""
    shown = args is not None and ("distributed_executor_backend" in args or form == "non-default")
    if not shown:
        return None
    chosen = _arg(args, form, "distributed_executor_backend", None)
    if isinstance(chosen, str):
        return chosen
    return "uni" if chosen is None and world_size(args, form) == 1 else None


def _compares_backend(test: ast.expr) -> str | None:
    """The string a `distributed_executor_backend == "..."` test compares with."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and isinstance(test.comparators[0].value, str)
    ):
        return None
    left = test.left
    name = left.id if isinstance(left, ast.Name) else getattr(left, "attr", None)
    return test.comparators[0].value if name == "distributed_executor_backend" else None


def executor_blanked(texts: dict[Path, str], backend: str | None) -> dict[Path, str]:
    """The branches picking another executor backend blanked (0.8's `Executor.get_class`
    imports the multiprocessing executor only for "mp")."""
    if backend is None:
        return texts
    out = dict(texts)
    for path, text, tree in parsed(texts, lambda text: "distributed_executor_backend ==" in text):
        lines = text.split("\n")
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and _compares_backend(node.test) not in (None, backend):
                blank(lines, node.body)
        out[path] = "\n".join(lines)
    return out
