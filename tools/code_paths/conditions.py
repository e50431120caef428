"""Tests inside a function's body, decided from the server's own arguments.

A function that runs imports what its branches that hold import. The tests SGLang writes
there read the server arguments (`self.server_args.disable_overlap_schedule`,
`get_global_server_args().enable_dp_attention`, `global_server_args_dict["..."]`), the
speculative algorithm (`self.spec_algorithm.is_eagle()`, whose meaning is read from the
release's own `SpeculativeAlgorithm` methods), and locals computed from those
(`enable_overlap = not server_args.disable_overlap_schedule`). Anything else is unknown.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from tools.gpu.guards import UNKNOWN, three_valued
from tools.python_ast import parse_module

SPEC_INFO = "srt/speculative/spec_info.py"
_ARGS = ("server_args", "global_server_args_dict", "get_global_server_args")


def algorithm_methods(pkg: Path) -> dict[str, ast.expr]:
    """`is_eagle` -> the expression it returns, from the release's SpeculativeAlgorithm."""
    try:
        tree = parse_module((pkg / SPEC_INFO).read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return {}
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "SpeculativeAlgorithm":
            for item in node.body:
                if (
                    isinstance(item, ast.FunctionDef)
                    and item.name.startswith("is_")
                    and len(item.body) >= 1
                    and isinstance(item.body[-1], ast.Return)
                    and item.body[-1].value is not None
                ):
                    found[item.name] = item.body[-1].value
    return found


def reads_server_args(node: ast.expr) -> bool:
    """`server_args`, `self.server_args`, `runner.server_args`, `get_global_server_args()`."""
    if isinstance(node, ast.Call):
        node = node.func
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name in _ARGS


@dataclass
class Facts:
    """What a test may read: the log's server_args and the speculative algorithm."""

    args: dict
    algorithm: str  # "NONE" when the server does not decode speculatively
    methods: dict[str, ast.expr] = field(default_factory=dict)

    def value(self, node: ast.expr, local: dict[str, ast.expr], depth: int = 0) -> object:
        if depth > 8:
            return UNKNOWN
        match node:
            case ast.Constant(value=value):
                return value
            case ast.Attribute(value=owner, attr=attr) if reads_server_args(owner):
                return self.args.get(attr, UNKNOWN)
            case ast.Subscript(value=owner, slice=ast.Constant(value=str() as key)) if (
                reads_server_args(owner)
            ):
                return self.args.get(key, UNKNOWN)
            case ast.Attribute(value=ast.Name(id="SpeculativeAlgorithm"), attr=attr):
                return attr
            case ast.Call(func=ast.Attribute(attr=method), args=[]) if method in self.methods:
                return self.value(
                    self.methods[method], {"self": ast.Constant(self.algorithm)}, depth + 1
                )
            case ast.Name(id=name) if name in local:
                return self.value(local[name], local, depth + 1)
            case ast.UnaryOp(op=ast.Not(), operand=operand):
                inner = self.value(operand, local, depth + 1)
                return UNKNOWN if inner is UNKNOWN else not inner
            case ast.BoolOp(op=op, values=values):
                operands = (self.value(v, local, depth + 1) for v in values)
                return three_valued(isinstance(op, ast.And), operands)
            case ast.Compare(left=left, ops=[op], comparators=[right]):
                a, b = self.value(left, local, depth + 1), self.value(right, local, depth + 1)
                if a is UNKNOWN or b is UNKNOWN:
                    return UNKNOWN
                return _compare(op, a, b)
            case ast.Tuple(elts=elts) | ast.List(elts=elts):
                items = [self.value(e, local, depth + 1) for e in elts]
                return UNKNOWN if any(i is UNKNOWN for i in items) else tuple(items)
        return UNKNOWN

    def holds(self, test: ast.expr, local: dict[str, ast.expr]) -> bool | None:
        value = self.value(test, local)
        return None if value is UNKNOWN else bool(value)


def _compare(op: ast.cmpop, a: object, b: object) -> object:
    try:
        if isinstance(op, ast.Eq | ast.Is):
            return a == b
        if isinstance(op, ast.NotEq | ast.IsNot):
            return a != b
        if isinstance(op, ast.In) and isinstance(b, tuple | list | str):
            return a in b
        if isinstance(op, ast.NotIn) and isinstance(b, tuple | list | str):
            return a not in b
    except TypeError:
        return UNKNOWN
    return UNKNOWN
