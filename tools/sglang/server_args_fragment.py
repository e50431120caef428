"""A piece of a server_args dump cut at both ends: no `server_args=` before it, no bracket after.

Posted logs hold such pieces: a terminal's or a viewer's wrap or cut, a paste that starts mid-line.
`tokenizer_mode='auto', ..., tp_size=8, ...` (from `ServerArgs(...)`) or `'model_path': 'x',
'tp_size': 8, ...` (from the 0.5.23 dict). Items are read only where the piece is known to be
aligned on them:

- the piece may start inside a string, a key or a nested value: reading starts at the first
  `, key=` from which every item is a well-formed `key=value` (a stray closer after it means it
  was nested: reading starts again past it); what comes before is dropped, and an item the piece
  starts with (its key may be the tail of a longer one) keeps a known key with a null value;
- the item the piece ends in is null (`tp_size=1` may have been `tp_size=16`);
- wrapped pieces go on over the next lines while those lines go on giving well-formed items.

Ordinary lines must not be taken for pieces: a piece must not begin a log record, must hold at
least four known ServerArgs field names, mostly repr-like values (literals, enum reprs), no
benchmark argument (bench_serving's `Namespace(...)` shares `host`, `port`, ...), and no opener
of another repr before its first item (`Namespace(`, `{`).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from tools.python_ast import parse_expression
from tools.sglang.log_lines import RECORD_START
from tools.sglang.server_args_fields import BENCH_FIELDS, KNOWN_FIELDS
from tools.sglang.server_args_repr import ENUM_REPR, ReprScanner, by_items, split_item

_CALL_ITEM = re.compile(r"(?:^|,)\s*([A-Za-z_]\w*)=(?!=)")
_DICT_ITEM = re.compile(r"(?:^|,)\s*'([A-Za-z_]\w*)'\s*:\s")
_ANY_ITEM = re.compile(r"(?:^|,)\s*(?:[A-Za-z_]\w*=(?!=)|'[A-Za-z_]\w*'\s*:\s)")
# Most values are one of these: read without `ast`, which costs far more per item.
_SIMPLE_VALUE = re.compile(
    r"None|True|False|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|'[^'\\\n]*'|\"[^\"\\\n]*\""
)
_MIN_KNOWN = 4
_MIN_REPR_SHARE = 0.75
_MAX_LINES = 400
_MAX_STARTS = 40  # candidate starts tried on a line
_MAX_FULL_SCANS = 3
_WINDOW = 1024
_CHUNK = 8192
_MAX_READS = 20  # runs read in a log: bounded work when many lines look like items
# A dump is tens of KB and a few hundred items: past these, text is no dump (bounded work).
_MAX_CHARS = 1 << 17
_MAX_ITEMS = 1000


def _form(text: str) -> bool | None:
    """Whether the text reads as `k=v` items (True) or `'k': v` ones (False); None: neither.
    Known field names decide, then any names in item position."""
    call = {m.group(1) for m in _CALL_ITEM.finditer(text)}
    mapping = {m.group(1) for m in _DICT_ITEM.finditer(text)}
    if not call and not mapping:
        return None
    known = len(call & KNOWN_FIELDS), len(mapping & KNOWN_FIELDS)
    return known[0] > known[1] or (known[0] == known[1] and len(call) >= len(mapping))


def _aligned(item: str, call: bool) -> bool:
    """A well-formed `key=value` item: a reading that started inside a string gives items with
    stray quotes that do not parse."""
    pair = split_item(item, call)
    if pair is None or not pair[0].isidentifier():
        return False
    value = pair[1].strip()
    if not value:
        return False
    if _SIMPLE_VALUE.fullmatch(value) or ENUM_REPR.fullmatch(value):
        return True
    try:
        parse_expression(value)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return value.startswith("<") and value.endswith(">")  # `<function f at 0x...>`
    return True


def _repr_like(value: str) -> bool:
    """A value as a repr prints it (not a variable, as in source code that passes kwargs)."""
    value = value.strip()
    if _SIMPLE_VALUE.fullmatch(value) or ENUM_REPR.fullmatch(value):
        return True
    try:
        node = parse_expression(value)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        # `torch.bfloat16`, `device(type='cuda')`, `nan`: reprs that are no literals
        return isinstance(node, ast.Attribute | ast.Call) or (
            isinstance(node, ast.Name) and node.id in ("nan", "inf")
        )
    return True


def _opens_repr(prefix: str) -> bool:
    """Whether the text before the first item opens a bracket it does not close."""
    depth = 0
    for ch in prefix:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
    return depth > 0


def _scan(text: str, call: bool) -> tuple[ReprScanner, int]:
    """The scan of `text` (stopped once it holds more items than a dump) and where it ended."""
    scanner = ReprScanner(")" if call else "}", stray_ends=True)
    for at in range(0, len(text), _CHUNK):
        chunk = text[at : at + _CHUNK]
        scanner.feed(chunk)
        if scanner.closed or len(scanner.items) > _MAX_ITEMS:
            end = at + len(chunk) - len(scanner.rest)
            scanner.rest = text[end:]  # all that follows the closer, not only its chunk's
            return scanner, end
    return scanner, len(text)


def _nested(scanner: ReprScanner) -> bool:
    """Whether the scan met a closer of a value it started inside (more items after it)."""
    return scanner.closed and (scanner.stray != scanner.closer or bool(scanner.rest.strip()))


class _Fragment:
    """A piece being read: its scanner, aligned on an item, goes on over wrapped lines."""

    def __init__(
        self, call: bool, scanner: ReprScanner, starts_cut: bool, indent: str = ""
    ) -> None:
        self.call = call
        self.scanner = scanner
        self.starts_cut = starts_cut  # the first item may be the tail of a longer one
        self.indent = indent  # a paste that indents every line: not the piece's own text
        self.lines = 1
        self.chars = sum(map(len, scanner.inner))

    @property
    def done(self) -> bool:
        return (
            self.scanner.closed or self.lines >= _MAX_LINES or len(self.scanner.items) > _MAX_ITEMS
        )

    def feed(self, body: str) -> bool:
        """Whether the line goes on with well-formed items (taken then)."""
        if self.chars + len(body) > _MAX_CHARS:
            return False
        if self.indent and body.startswith(self.indent):
            body = body[len(self.indent) :]
        self.chars += len(body)
        scanner = self.scanner
        mark = scanner.mark()
        before = len(scanner.items)
        scanner.feed(body)
        if _nested(scanner) or not all(_aligned(i, self.call) for i in scanner.items[before:]):
            scanner.rollback(mark)
            return False
        self.lines += 1
        return True

    def result(self) -> dict[str, Any] | None:
        whole, tail = self.scanner.items, self.scanner.tail
        first: tuple[str, str] | None = None
        if self.starts_cut:  # its key may be the tail of a longer one: a null at most
            first = split_item(whole[0] if whole else tail, self.call)
            whole, tail = (whole[1:], tail) if whole else (whole, "")
        pairs = [p for p in (split_item(i, self.call) for i in whole) if p is not None]
        keys = {key for key, _ in pairs}
        last = split_item(tail, self.call) if tail.strip() else None
        if len(keys & KNOWN_FIELDS) < _MIN_KNOWN or BENCH_FIELDS.intersection(
            keys | {last[0] if last else ""}
        ):
            return None
        if sum(_repr_like(value) for _, value in pairs) < _MIN_REPR_SHARE * len(pairs):
            return None
        args = by_items(whole, tail, self.call)
        if first is not None and first[0] in KNOWN_FIELDS and first[0] not in args:
            args = {first[0]: None, **args}  # a key read whole later is that key's
        return args


def _start(body: str) -> _Fragment | None:
    """A fragment aligned on the first item from which the line reads well, or None."""
    body = body[:_MAX_CHARS]
    call = _form(body)
    if call is None:
        return None
    floor, full_scans = 0, 0
    for n, m in enumerate((_CALL_ITEM if call else _DICT_ITEM).finditer(body)):
        if n >= _MAX_STARTS or full_scans >= _MAX_FULL_SCANS:
            break
        start = m.start() if m.group(0)[:1] != "," else m.start() + 1
        if start < floor:
            continue
        # A few items first: a wrong start shows within them, and reading the whole of a long
        # line from each start would cost starts x length.
        text = body[start : start + _WINDOW]
        scanner, end = _scan(text, call)
        if not _nested(scanner) and all(_aligned(item, call) for item in scanner.items):
            if len(text) < len(body) - start:
                full_scans += 1
                scanner, end = _scan(body[start:], call)
            if len(scanner.items) > _MAX_ITEMS:
                return None  # no dump has that many items, from any start
            if not _nested(scanner) and all(_aligned(item, call) for item in scanner.items):
                if _opens_repr(body[:start]):
                    return None  # `Namespace(backend=...`: another repr's start, not a piece
                return _Fragment(
                    call,
                    scanner,
                    starts_cut=not body[:start].strip(),
                    indent=body[: len(body) - len(body.lstrip())],
                )
        if _nested(scanner):  # it started inside a nested value: go on past its closer
            floor = start + end
    return None


def _read_run(lines: list[str]) -> dict[str, Any] | None:
    """The first fragment in a run of lines that begin no log record."""
    current: _Fragment | None = None
    for body in lines:
        if current is not None:
            if not current.done and current.feed(body):
                continue
            found, current = current.result(), None
            if found is not None:
                return found
        # Any line with an item may start one: a wrapped piece's first lines may hold no known
        # name. Whether the piece is one is judged when it ends.
        if _ANY_ITEM.search(body):
            current = _start(body)
    return current.result() if current is not None else None


class FragmentFinder:
    """Fed the lines that are no dump's: the first fragment found.

    Lines that begin no log record are gathered into runs, and a run is read only when it holds
    enough known field names to hold a fragment: most runs (tracebacks, progress bars, prints)
    cost a membership test per line.
    """

    def __init__(self) -> None:
        self.run: list[str] = []
        self.run_chars = 0
        self.known: set[str] = set()
        self.found: dict[str, Any] | None = None
        self.reads = 0

    def feed(self, body: str) -> None:
        itemish = "=" in body or "':" in body
        if self.found is not None or (not self.run and not itemish) or self.reads >= _MAX_READS:
            return
        if RECORD_START.match(body, 0, 200):
            self.interrupt()
            return
        self.run.append(body)
        self.run_chars += len(body)
        if itemish:
            self.known.update(
                m.group(1)
                for pattern in (_CALL_ITEM, _DICT_ITEM)
                for m in pattern.finditer(body, 0, _MAX_CHARS)
            )
            self.known &= KNOWN_FIELDS
        if len(self.run) >= _MAX_LINES or self.run_chars >= _MAX_CHARS:
            self.interrupt()

    def interrupt(self) -> None:
        """The run of lines (if any) ends here."""
        run, enough = self.run, len(self.known) >= _MIN_KNOWN
        self.run, self.run_chars, self.known = [], 0, set()
        if enough and self.found is None and self.reads < _MAX_READS:
            self.reads += 1
            self.found = _read_run(run)

    def result(self) -> dict[str, Any] | None:
        self.interrupt()
        return self.found
