"""Older SGLang layouts (before attention_registry.py): the model runner picks the attention
backend in `if ...attention_backend == "name":` branches. Read which backend modules each branch
uses, by name or by import, from the code itself. A module used only under a further condition
(e.g. `if self.server_args.enable_double_sparsity:`, or a GPU guard such as `elif _is_hip:`)
is recorded with it, so the log's server_args or the GPU can decide it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from tools.code_paths.conditions import reads_server_args
from tools.python_ast import parse_module

RUNNER = "srt/model_executor/model_runner.py"
ATTENTION_PKG = "sglang.srt.layers.attention."
# where a release keeps backend modules: its attention layers, and (0.5) each platform's own
BACKEND_PKGS = (ATTENTION_PKG, "sglang.srt.hardware_backend.")
MLA_FLAG = "use_mla_backend"


class Condition(BaseModel):
    """A backend module used only when a further test holds (or fails: `when` False)."""

    module: str
    test: str  # as written
    flag: str | None  # the server_args field the test reads, when it is that simple
    when: bool

    def holds(self, server_args: dict) -> bool | None:
        """Whether the module is used, by the log's server_args; None if they cannot tell."""
        if self.flag is None or self.flag not in server_args:
            return None
        value = server_args[self.flag]
        truthy = value not in (False, None, 0, "", "False", "None", "0")
        return truthy == self.when


class Registration(BaseModel):
    backend: str
    source: str  # package-relative file holding the selection
    line: int
    selector: str  # the code that selects it, as written
    modules: list[str]  # package-relative backend files it uses
    conditional: list[Condition] = []  # used only under a further condition


def module_file(module: str) -> str:
    return "srt/" + module.removeprefix("sglang.srt.").replace(".", "/") + ".py"


def _selector_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _backends(test: ast.expr, selectors: frozenset[str] = frozenset()) -> list[str]:
    """The backend names a test compares a backend selector with (== or in): an
    `...attention_backend` attribute, or a local or parameter derived from one (`selectors`)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return []
    name = _selector_name(test.left)
    if not (name.endswith(("attention_backend", "attention_backend_str")) or name in selectors):
        return []
    right = test.comparators[0]
    if isinstance(test.ops[0], ast.Eq) and isinstance(right, ast.Constant):
        return [str(right.value)]
    if isinstance(test.ops[0], ast.In) and isinstance(right, ast.Tuple | ast.List | ast.Set):
        return [str(e.value) for e in right.elts if isinstance(e, ast.Constant)]
    return []


def selector_names(tree: ast.Module) -> frozenset[str]:
    """Names that hold a backend's name: the parameters of a function named for choosing an
    attention backend (`_get_attention_backend_from_str(self, backend_str)`), and locals
    assigned from an `...attention_backend` attribute."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and "attention_backend" in node.name:
            found.update(a.arg for a in node.args.args if a.arg != "self")
        elif isinstance(node, ast.Assign) and any(
            isinstance(n, ast.Attribute) and n.attr.endswith("attention_backend")
            for n in ast.walk(node.value)
        ):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(found)


def mentions_mla(test: ast.expr) -> bool:
    """A test of the model's attention kind (`runner.use_mla_backend`), decided per model."""
    return any(isinstance(n, ast.Attribute) and n.attr == MLA_FLAG for n in ast.walk(test))


def _flag(test: ast.expr) -> tuple[str | None, bool]:
    """`server_args.NAME` -> (NAME, True); `not server_args.NAME` -> (NAME, False)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        name, when = _flag(test.operand)
        # not a server argument (`not _is_hip`): the test stays as written, to hold as is
        return (name, not when) if name is not None else (None, True)
    if isinstance(test, ast.Attribute) and reads_server_args(test.value):
        return test.attr, True
    return None, True


def server_flag(test: ast.expr) -> bool:
    """A test of one server argument (`runner.server_args.enable_double_sparsity`)."""
    return _flag(test)[0] is not None


Branching = Callable[[ast.expr], bool]  # does an `if` with this test make its body conditional


def _condition(module: str, unders: tuple[tuple[ast.expr, bool], ...]) -> Condition:
    """The condition a module is used under: one test (maybe a server_args flag), or all of
    the enclosing tests, each as the branch needs it."""
    if len(unders) == 1:
        test, taken = unders[0]
        flag, when = _flag(test)
        return Condition(
            module=module, test=ast.unparse(test), flag=flag, when=when if taken else not when
        )
    parts = [t if taken else ast.UnaryOp(op=ast.Not(), operand=t) for t, taken in unders]
    return Condition(
        module=module,
        test=ast.unparse(ast.BoolOp(op=ast.And(), values=parts)),
        flag=None,
        when=True,
    )


def uses(
    stmts: list[ast.stmt],
    names: dict[str, str],
    branching: Branching,
    direct: set[str],
    conditional: dict[str, Condition],
    unders: tuple[tuple[ast.expr, bool], ...] = (),
    selectors: frozenset[str] = frozenset(),
) -> None:
    """The backend modules `stmts` use (by a name of `names` or by import), each either
    directly or under the `if` tests that `branching` accepts."""
    for stmt in stmts:
        if isinstance(stmt, ast.If) and not _backends(stmt.test, selectors):
            more = ((stmt.test, True),) if branching(stmt.test) else ()
            uses(stmt.body, names, branching, direct, conditional, unders + more, selectors)
            less = ((stmt.test, False),) if more else ()
            uses(stmt.orelse, names, branching, direct, conditional, unders + less, selectors)
            continue
        if isinstance(stmt, ast.For | ast.While | ast.With | ast.Try):
            for block in (
                getattr(stmt, "body", []),
                getattr(stmt, "orelse", []),
                getattr(stmt, "finalbody", []),
                *(h.body for h in getattr(stmt, "handlers", [])),
            ):
                uses(block, names, branching, direct, conditional, unders, selectors)
            continue
        found = {names[n.id] for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id in names}
        found |= {
            module_file(n.module)
            for n in ast.walk(stmt)
            if isinstance(n, ast.ImportFrom)
            and n.module is not None
            and n.module.startswith(BACKEND_PKGS)
        }
        for module in found:
            if not unders:
                direct.add(module)
            else:
                conditional.setdefault(module, _condition(module, unders))


def read_branches(pkg: Path) -> list[Registration]:
    path = pkg / RUNNER
    if not path.exists():
        return []
    try:
        tree = parse_module(path.read_text(errors="replace"))
    except (OSError, SyntaxError):  # unreadable: no branch is known
        return []
    names = {
        alias.asname or alias.name: module_file(node.module)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module is not None
        and node.module.startswith(ATTENTION_PKG)
        for alias in node.names
    }
    selectors = selector_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            for backend in _backends(node.test, selectors):
                direct: set[str] = set()
                conditional: dict[str, Condition] = {}
                uses(node.body, names, lambda _: True, direct, conditional, (), selectors)
                found.append(
                    Registration(
                        backend=backend,
                        source=RUNNER,
                        line=node.lineno,
                        selector=f"if {ast.unparse(node.test)}",
                        modules=sorted(direct),
                        conditional=[c for m, c in sorted(conditional.items()) if m not in direct],
                    )
                )
    return found
