"""Reading a Python repr item by item: the `server_args=` dump and fragments of it.

A scanner that knows quotes, escapes and brackets splits `k=v, k=v` (a dataclass repr) or
`'k': v, 'k': v` (a dict repr) into top-level items, fed in chunks across wrapped lines. A whole
repr is read with `ast`; items one by one when it is cut (or holds non-literal reprs such as
`torch.bfloat16`). The item a cut falls in keeps its key with a null value: a number, `True` or a
string cut short must never be read as a value.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from tools.python_ast import parse_expression

KEYWORD = re.compile(r"\s*([A-Za-z_]\w*)\s*=(?!=)")
DICT_KEY = re.compile(r"""\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\s*:""")
ENUM_REPR = re.compile(r"<[\w.]+: (.+)>", re.DOTALL)
_CLOSER = {"(": ")", "[": "]", "{": "}"}
_MAX_ITEMS = 4096  # ServerArgs has a few hundred fields: bounded work on hostile input


class ReprScanner:
    """Top-level items of a repr fed in chunks, honouring quotes, escapes and nesting."""

    def __init__(self, closer: str, stray_ends: bool = False) -> None:
        self.closer = closer
        # A fragment's start is unknown: a closer with nothing open there ends the scan (the
        # dump's end, or the end of a nested value the fragment started in).
        self.stray_ends = stray_ends
        self.stray = ""  # the closer that ended a scan, and what followed it on that chunk
        self.rest = ""
        self.stack: list[str] = []
        self.quote = ""
        self.escape = False
        self.items: list[str] = []
        self.current: list[str] = []
        self.inner: list[str] = []
        self.closed = False

    def feed(self, chunk: str) -> None:
        start = 0
        for i, ch in enumerate(chunk):
            if self.quote:
                if self.escape:
                    self.escape = False
                elif ch == "\\":
                    self.escape = True
                elif ch == self.quote:
                    self.quote = ""
            elif ch in "'\"":
                self.quote = ch
            elif ch in _CLOSER:
                self.stack.append(_CLOSER[ch])
            elif self.stack and ch == self.stack[-1]:
                self.stack.pop()
            elif not self.stack and (ch == self.closer or (self.stray_ends and ch in ")]}")):
                self._take(chunk[start:i])
                self._end_item()
                self.closed = True
                self.stray, self.rest = ch, chunk[i + 1 :]
                return
            elif not self.stack and ch == ",":
                self._take(chunk[start:i])
                self._end_item()
                start = i + 1
                self.inner.append(",")
        self._take(chunk[start:])

    def mark(self) -> tuple[Any, ...]:
        """The state to go back to if the next chunk turns out not to belong to the repr."""
        return (
            len(self.items),
            list(self.current),
            len(self.inner),
            list(self.stack),
            self.quote,
            self.escape,
            self.closed,
            self.stray,
            self.rest,
        )

    def rollback(self, mark: tuple[Any, ...]) -> None:
        (
            items,
            current,
            inner,
            stack,
            self.quote,
            self.escape,
            self.closed,
            self.stray,
            self.rest,
        ) = mark
        del self.items[items:]
        del self.inner[inner:]
        self.current, self.stack = current, stack

    def _take(self, text: str) -> None:
        self.current.append(text)
        self.inner.append(text)

    def _end_item(self) -> None:
        self.items.append("".join(self.current))
        self.current = []

    @property
    def tail(self) -> str:
        """The item the dump was cut in (empty when it ended on a comma or closed)."""
        return "".join(self.current)


def to_json(value: Any) -> Any:
    """A Python literal as JSON data: tuples and sets become lists, non-finite floats null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, dict):
        return {k if isinstance(k, str) else repr(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((to_json(v) for v in value), key=repr)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _node_to_json(node: ast.expr) -> Any:
    """A parsed value: a literal as JSON; `Cfg(a=1)` as {"a": 1}; anything else as its source."""
    try:
        return to_json(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Name) and node.id in ("nan", "inf"):
        return None  # repr() of a non-finite float: JSON has no such number
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.operand, ast.Name)
        and node.operand.id == "inf"
    ):
        return None
    if isinstance(node, ast.Call) and not node.args and all(k.arg for k in node.keywords):
        return {k.arg: _node_to_json(k.value) for k in node.keywords}
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_node_to_json(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        keys = [k for k in node.keys if k is not None]  # None: a `**mapping` entry
        if len(keys) == len(node.keys):
            return {
                str(_node_to_json(k)): _node_to_json(v)
                for k, v in zip(keys, node.values, strict=True)
            }
    return ast.unparse(node)


def repr_value(source: str) -> Any:
    """One complete value's repr as JSON; an Enum repr `<X.Y: 'v'>` gives its value."""
    text = source.strip()
    enum = ENUM_REPR.fullmatch(text)
    if enum:
        text = enum.group(1)
    try:
        return _node_to_json(parse_expression(text))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return text


def split_item(item: str, call: bool) -> tuple[str, str] | None:
    m = (KEYWORD if call else DICT_KEY).match(item)
    if m is None:
        return None
    key = m.group(1) if call else (m.group(1) if m.group(1) is not None else m.group(2))
    return key, item[m.end() :]


def whole_repr(inner: str, call: bool) -> dict[str, Any] | None:
    """The complete dump read by `ast` in one go (None when it does not parse)."""
    try:
        if call:
            node = parse_expression(f"f({inner})")
            if not isinstance(node, ast.Call) or node.args:
                return None
            return {k.arg: _node_to_json(k.value) for k in node.keywords if k.arg}
        parsed = parse_expression("{" + inner + "}")
        result = _node_to_json(parsed)
        return result if isinstance(result, dict) else None
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def by_item(scanner: ReprScanner, call: bool) -> dict[str, Any]:
    """Item by item; the item a cut falls in keeps its key with a null value."""
    return by_items(scanner.items, scanner.tail, call)


def by_items(items: list[str], tail: str, call: bool) -> dict[str, Any]:
    """Whole items read one by one, and the key of the cut one (`tail`) with a null value."""
    args: dict[str, Any] = {}
    for item in items[:_MAX_ITEMS]:
        pair = split_item(item, call)
        if pair and pair[1].strip():
            args.setdefault(pair[0], repr_value(pair[1]))
    pair = split_item(tail, call) if tail.strip() else None
    if pair:
        args.setdefault(pair[0], None)
    return args
