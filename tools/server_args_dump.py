"""The startup `server_args=` dump of an SGLang server, both formats (sglang-facts.md §1).

- 0.5.23: `server_args={'model_path': '...', 'cuda_graph_config': {...}, ...}` (a dict repr).
- older: `server_args=ServerArgs(model_path='...', tp_size=8, ...)` (a dataclass repr).

The dump is one log record, but posted logs wrap it over several lines or cut it short. A scanner
that knows quotes and brackets splits it into top-level items across lines; the whole repr is read
with `ast` when it is complete, and item by item when it is not (or holds non-literal reprs such
as `torch.bfloat16`). The item the cut falls in is kept with a null value: a number, `True` or a
string cut short must never be read as a value.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from tools.sglang_log_lines import load_lines

_START = re.compile(r"server_args\s*=\s*(\{)|\bServerArgs(\()")
# What begins a new log record; a wrapped dump's continuation lines never start like this.
_RECORD_START = re.compile(
    r"\s*$|\[\d{4}-\d\d-\d\d|\[\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[ T]\d\d:\d\d"
    r"|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b|Traceback \("
    r"|\[[a-z][\w-]{0,30}\] |/\S+\.py:\d+: "
)
_KEYWORD = re.compile(r"\s*([A-Za-z_]\w*)\s*=(?!=)")
_DICT_KEY = re.compile(r"""\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\s*:""")
_ENUM_REPR = re.compile(r"<[\w.]+: (.+)>", re.DOTALL)
_MAX_CONTINUATION_LINES = 400
_MAX_DUMPS = 50
_CLOSER = {"(": ")", "[": "]", "{": "}"}


class _Scanner:
    """Top-level items of a repr fed in chunks, honouring quotes, escapes and nesting."""

    def __init__(self, closer: str) -> None:
        self.closer = closer
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
            elif not self.stack and ch == self.closer:
                self._take(chunk[start:i])
                self._end_item()
                self.closed = True
                return
            elif not self.stack and ch == ",":
                self._take(chunk[start:i])
                self._end_item()
                start = i + 1
                self.inner.append(",")
        self._take(chunk[start:])

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
    if (isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Name)
            and node.operand.id == "inf"):
        return None
    if isinstance(node, ast.Call) and not node.args and all(k.arg for k in node.keywords):
        return {k.arg: _node_to_json(k.value) for k in node.keywords}
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_node_to_json(e) for e in node.elts]
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return {str(_node_to_json(k)): _node_to_json(v) for k, v in zip(node.keys, node.values,
                                                                         strict=True)}
    return ast.unparse(node)


def _value(source: str) -> Any:
    """One complete value's repr as JSON; an Enum repr `<X.Y: 'v'>` gives its value."""
    text = source.strip()
    enum = _ENUM_REPR.fullmatch(text)
    if enum:
        text = enum.group(1)
    try:
        return _node_to_json(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return text


def _split_item(item: str, call: bool) -> tuple[str, str] | None:
    m = (_KEYWORD if call else _DICT_KEY).match(item)
    if m is None:
        return None
    key = m.group(1) if call else (m.group(1) if m.group(1) is not None else m.group(2))
    return key, item[m.end():]


def _whole(inner: str, call: bool) -> dict[str, Any] | None:
    """The complete dump read by `ast` in one go (None when it does not parse)."""
    try:
        if call:
            node = ast.parse(f"f({inner})", mode="eval").body
            if not isinstance(node, ast.Call) or node.args:
                return None
            return {k.arg: _node_to_json(k.value) for k in node.keywords if k.arg}
        parsed = ast.parse("{" + inner + "}", mode="eval").body
        result = _node_to_json(parsed)
        return result if isinstance(result, dict) else None
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _by_item(scanner: _Scanner, call: bool) -> dict[str, Any]:
    """Item by item; the item a cut falls in keeps its key with a null value."""
    args: dict[str, Any] = {}
    for item in scanner.items:
        pair = _split_item(item, call)
        if pair and pair[1].strip():
            args.setdefault(pair[0], _value(pair[1]))
    pair = _split_item(scanner.tail, call) if scanner.tail.strip() else None
    if pair:
        args.setdefault(pair[0], None)
    return args


def _read_dump(bodies: list[str], index: int, m: re.Match[str]) -> tuple[dict, bool] | None:
    """(args, complete) of the dump starting on line `index`; None when no key could be read."""
    call = m.group(2) is not None
    scanner = _Scanner(")" if call else "}")
    scanner.feed(bodies[index][m.end():])
    stop = min(len(bodies), index + 1 + _MAX_CONTINUATION_LINES)
    for follow in range(index + 1, stop):
        if scanner.closed or _RECORD_START.match(bodies[follow][:200]):
            break
        scanner.feed(bodies[follow])  # a hard wrap splits anywhere, even mid-token: join as is
    args = _whole("".join(scanner.inner), call) if scanner.closed else None
    if args is None:
        args = _by_item(scanner, call)
    return (args, scanner.closed) if args else None


def _is_log_record(before: str) -> bool:
    """False for a dump-like text inside source code (an indented traceback line, a string)."""
    return not before[:1].isspace() and not any(q in before for q in "'\"")


def find_server_args(bodies: list[str]) -> dict[str, Any] | None:
    """The first complete dump; when every dump is cut, the first one (complete keys kept)."""
    first_cut: dict[str, Any] | None = None
    attempts = 0
    for index, body in enumerate(bodies):
        if "server_args" not in body and "ServerArgs(" not in body:
            continue
        m = _START.search(body)
        if m is None or not _is_log_record(body[:m.start()]):
            continue
        attempts += 1
        if attempts > _MAX_DUMPS:
            break  # each attempt may read hundreds of lines: bounded work on hostile input
        found = _read_dump(bodies, index, m)
        if found is None:
            continue
        args, complete = found
        if complete:
            return args
        first_cut = first_cut or args
    return first_cut


def parse_server_args(text: str) -> dict[str, Any] | None:
    """The server_args of a log's text (lines as split by tools.sglang_log_lines)."""
    return find_server_args(load_lines(text).bodies)
