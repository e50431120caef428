"""Regular expressions that can backtrack catastrophically: the shape of a ReDoS advisory.

A repetition whose body can match one string in more than one way makes a backtracking engine
try every split of a long input that fails to match: `(?:\\\\[\\\\*]|[^*])*` (mistune's
CVE-2022-34749) reads a run of n backslashes as pairs or as singles, about 1.6**n ways;
`(a+)+` and `(\\w+\\s?)+` split a run of letters between iterations. Read from Python's own
regex parser (re._parser), on the string literals of one source line:

- an alternation under an unbounded repetition where one branch matches a string that a
  sequence of the other branches also matches (branches of fixed length, by character sets);
- an unbounded repetition inside another, where the rest of the outer body is optional or
  matches the inner one's characters too.

regexploit (PyPI) finds the second shape but not the first, which is mistune's. This is a
ranking signal for the bisection, never a verdict: a pattern flagged here is not known slow.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from collections.abc import Iterator
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

# the characters a class is tested on: Latin-1, and a few beyond it (a CJK letter, a wide space)
_UNIVERSE = [*range(256), 0x3000, 0x4E00, 0x1F600]
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT)  # POSSESSIVE_REPEAT never backtracks
_CATEGORIES = {
    sre.CATEGORY_DIGIT: str.isdigit,
    sre.CATEGORY_SPACE: str.isspace,
    sre.CATEGORY_WORD: lambda c: c.isalnum() or c == "_",
    sre.CATEGORY_LINEBREAK: lambda c: c == "\n",
}
_NEGATED = {
    sre.CATEGORY_NOT_DIGIT: sre.CATEGORY_DIGIT,
    sre.CATEGORY_NOT_SPACE: sre.CATEGORY_SPACE,
    sre.CATEGORY_NOT_WORD: sre.CATEGORY_WORD,
    sre.CATEGORY_NOT_LINEBREAK: sre.CATEGORY_LINEBREAK,
}

Item = tuple[Any, Any]  # one (opcode, argument) of a parsed pattern (re._parser has no stubs)
CharSet = frozenset[int]


def literals(line: str) -> list[str]:
    """The string literals of one line of Python source; [] where the line is not whole
    tokens (a line of a triple-quoted string, say)."""
    found: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(line).readline):
            if token.type == tokenize.STRING:
                value = ast.literal_eval(token.string)
                if isinstance(value, str):
                    found.append(value)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return []
    return found


def prone_patterns(line: str) -> list[str]:
    """The literals of `line` that are regexes prone to catastrophic backtracking; where none
    alone is, all of them joined, as implicit concatenation joins them."""
    found = literals(line)
    alone = [text for text in found if prone(text)]
    joined = "".join(found)
    return alone or ([joined] if len(found) > 1 and prone(joined) else [])


def prone(pattern: str) -> bool:
    """Whether `pattern` has a repetition whose body matches a string in more than one way."""
    try:
        with warnings.catch_warnings():  # "possible nested set": the pattern's, not ours
            warnings.simplefilter("ignore")
            tree = _parser.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return False
    return any(_ambiguous(list(body)) for body in _repeated_bodies(list(tree)))


def _repeated_bodies(items: list[Item]) -> Iterator[list[Item]]:
    """The body of every unbounded, backtracking repetition, however deep."""
    for op, arg in items:
        for sub in _children(op, arg):
            yield from _repeated_bodies(sub)
        if op in _REPEATS and arg[1] == sre.MAXREPEAT:
            yield list(arg[2])


def _children(op: Any, arg: Any) -> list[list[Item]]:
    if op in _REPEATS or op == sre.POSSESSIVE_REPEAT:
        return [list(arg[2])]
    if op == sre.SUBPATTERN:
        return [list(arg[3])]
    if op == sre.BRANCH:
        return [list(b) for b in arg[1]]
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return [list(arg[1])]
    return []


def _unwrap(items: list[Item]) -> list[Item]:
    """A group around the whole body says nothing: its contents."""
    while len(items) == 1 and items[0][0] == sre.SUBPATTERN:
        items = list(items[0][1][3])
    return items


def _ambiguous(body: list[Item]) -> bool:
    items = _unwrap(body)
    if len(items) == 1 and items[0][0] == sre.BRANCH:
        return _branches_overlap([_fixed(list(b)) for b in items[0][1][1]])
    return _nested(items)


def _nested(body: list[Item]) -> bool:
    """An unbounded repetition of one character class, the rest of the body optional or
    matching those characters too: a run of them splits between the outer iterations."""
    items = [_bare(item) for item in body]
    for at, (op, arg) in enumerate(items):
        if op not in _REPEATS or arg[1] != sre.MAXREPEAT:
            continue
        inner = _fixed(list(arg[2]))
        if inner is None or len(inner) != 1:
            continue
        rest = items[:at] + items[at + 1 :]
        if all(_optional(item) or _overlaps(item, inner[0]) for item in rest):
            return True
    return False


def _bare(item: Item) -> Item:
    """A group of one item: that item."""
    while item[0] == sre.SUBPATTERN and len(item[1][3]) == 1:
        item = item[1][3][0]
    return item


def _optional(item: Item) -> bool:
    op, arg = item
    return op in (*_REPEATS, sre.POSSESSIVE_REPEAT) and arg[0] == 0 or op == sre.AT


def _overlaps(item: Item, chars: CharSet) -> bool:
    one = _charset(item)
    return one is not None and bool(one & chars)


def _branches_overlap(branches: list[list[CharSet] | None]) -> bool:
    """Some branch matches a string that a sequence of the others matches too."""
    fixed = [b for b in branches if b]
    for i, target in enumerate(fixed):
        others = fixed[:i] + fixed[i + 1 :]
        reach = [True] + [False] * len(target)
        for at in range(len(target)):
            if not reach[at]:
                continue
            for other in others:
                end = at + len(other)
                if end <= len(target) and all(
                    a & b for a, b in zip(target[at:end], other, strict=True)
                ):
                    reach[end] = True
        if reach[-1]:
            return True
    return False


def _fixed(items: list[Item]) -> list[CharSet] | None:
    """A body of fixed length as its characters' sets; None for anything else."""
    out: list[CharSet] = []
    for item in _unwrap(items):
        if item[0] == sre.SUBPATTERN:
            inner = _fixed(list(item[1][3]))
            if inner is None:
                return None
            out.extend(inner)
            continue
        chars = _charset(item)
        if chars is None:
            return None
        out.append(chars)
    return out


def _charset(item: Item) -> CharSet | None:
    """The characters one item matches (of _UNIVERSE); None where it is not one character."""
    op, arg = item
    if op == sre.LITERAL:
        return frozenset([arg])
    if op == sre.NOT_LITERAL:
        return frozenset(c for c in _UNIVERSE if c != arg)
    if op == sre.ANY:
        return frozenset(c for c in _UNIVERSE if c != ord("\n"))
    if op == sre.IN:
        return _class(list(arg))
    return None


def _class(members: list[Item]) -> CharSet:
    negate = bool(members) and members[0][0] == sre.NEGATE
    chars: set[int] = set()
    for op, arg in members[1:] if negate else members:
        if op == sre.LITERAL:
            chars.add(arg)
        elif op == sre.RANGE:
            low, high = arg
            chars.update(c for c in _UNIVERSE if low <= c <= high)
        elif op == sre.CATEGORY:
            chars.update(_category(arg))
    return frozenset(c for c in _UNIVERSE if c not in chars) if negate else frozenset(chars)


def _category(code: Any) -> set[int]:
    base = _NEGATED.get(code, code)
    test = _CATEGORIES.get(base)
    if test is None:
        return set(_UNIVERSE)  # a category we do not know: every character, to be safe
    inside = {c for c in _UNIVERSE if test(chr(c))}
    return inside if base is code else set(_UNIVERSE) - inside
