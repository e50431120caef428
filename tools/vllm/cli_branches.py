"""Code that runs only under a `vllm` subcommand that starts no server, taken out of what the
server can name.

`vllm serve` runs the CLI's `main()`, which imports every subcommand's module, and those test
the command line to do their work only when they were asked for: 0.34's `vllm bench` imports
its benchmark modules (`vllm/benchmarks/serve.py` and the rest) in a function called under
`if first_positional == self.name:`, with `name = "bench"`. A server's command line is
`vllm serve ...` (or `python -m ...api_server`): a test that compares what it reads from
`sys.argv` (or a local assigned from it) with the name of a subcommand that starts no server
is false there; its branch is blanked (line numbers kept), and the `else` of a `!=`.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tools.vllm.blanking import Blanked, blank, parsed, plain_functions, without_dead_functions

# subcommands of the `vllm` CLI that start no server (a benchmark client, the chat and
# completion clients, the environment report): a server's command line never names them
NOT_SERVING = frozenset({"bench", "chat", "complete", "collect-env"})


def _reads_argv(node: ast.AST, derived: set[str]) -> bool:
    """Whether `node` reads `sys.argv`, or a name assigned from it."""
    return any(
        (isinstance(n, ast.Attribute) and n.attr == "argv" and _is_name(n.value, "sys"))
        or (isinstance(n, ast.Name) and n.id in derived)
        for n in ast.walk(node)
    )


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _argv_locals(function: ast.AST) -> set[str]:
    """The names a function assigns from `sys.argv` (`first_positional = next(...)`)."""
    derived: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and _reads_argv(node.value, derived):
            derived |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return derived


def _named(node: ast.expr, own_name: str | None) -> str | None:
    """The subcommand a compared value names: a string, a list's first one, `self.name`."""
    match node:
        case ast.Constant(value=str() as value):
            return value
        case ast.List(elts=[ast.Constant(value=str() as value), *_]):
            return value
        case ast.Attribute(value=ast.Name(id="self"), attr="name"):
            return own_name
    return None


def _decide(test: ast.expr, derived: set[str], own_name: str | None) -> bool | None:
    """Whether `test` holds on a server's command line; None where it cannot be told."""
    if isinstance(test, ast.BoolOp):
        values = [_decide(v, derived, own_name) for v in test.values]
        deciding = isinstance(test.op, ast.Or)  # a true part decides an `or`, a false an `and`
        return deciding if deciding in values else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right, op = test.left, test.comparators[0], test.ops[0]
    for argv, other in ((left, right), (right, left)):
        name = _named(other, own_name)
        if (
            name in NOT_SERVING
            and _reads_argv(argv, derived)
            and isinstance(op, ast.Eq | ast.NotEq)
        ):
            return isinstance(op, ast.NotEq)
    return None


def _class_name(cls: ast.ClassDef) -> str | None:
    """A subcommand class's `name = "..."`."""
    for node in cls.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)):
            continue
        if any(isinstance(t, ast.Name) and t.id == "name" for t in node.targets):
            value = node.value.value
            return value if isinstance(value, str) else None
    return None


def _functions(tree: ast.Module) -> list[tuple[ast.AST, str | None]]:
    """Each top-level function, and each method with its class's subcommand name."""
    found: list[tuple[ast.AST, str | None]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((node, None))
        elif isinstance(node, ast.ClassDef):
            own = _class_name(node)
            found += [(f, own) for f in node.body if isinstance(f, ast.FunctionDef)]
    return found


def other_subcommand_blanked(texts: dict[Path, str]) -> dict[Path, str]:
    """`texts` with the branches only another subcommand takes blanked."""
    blanked: dict[Path, Blanked] = {}
    for path, text, tree in parsed(texts, lambda t: "sys.argv" in t):
        lines = text.split("\n")
        changed = False
        for function, own_name in _functions(tree):
            derived = _argv_locals(function)
            for node in ast.walk(function):
                if isinstance(node, ast.If):
                    value = _decide(node.test, derived, own_name)
                    if value is not None:
                        blank(lines, node.orelse if value else node.body)
                        changed = True
        if changed:
            blanked[path] = (lines, plain_functions(tree), text)
    return without_dead_functions(texts, blanked)
