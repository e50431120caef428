"""Time the profile shows in regular-expression matching.

A regex runs in C: its time is the self time of the Python function that called `search`,
`match`, `sub` or a scanner on it. When that function spends the gap, the likeliest cause is a
pattern that backtracks, wherever the pattern is written (a class attribute in another file
that a scanner was built from, a table of rules): the function's own lines may never have
changed. agent/phases/pattern_focus.py weighs the commits that change a pattern accordingly.
"""

from __future__ import annotations

from pathlib import Path

from tools.profile.code_names import FunctionSpan, functions, named
from tools.profile.movers import Mover
from tools.python_ast import parse_module

# methods of a compiled pattern (and the `re` module's functions of the same names); no `str`
# or `bytes` method has these names
REGEX_CALLS = frozenset(
    {"search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "scanner"}
)


def _spans(root: Path, path: str) -> list[FunctionSpan]:
    try:
        file = Path(path) if Path(path).is_absolute() else root / path
        return functions(parse_module(file.read_text(encoding="utf-8", errors="replace")))
    except (OSError, SyntaxError, ValueError, RecursionError):
        return []


def regex_time(movers: list[Mover], root: Path) -> tuple[float, str] | None:
    """(share of the gap, "path:qualname") of the sampled self-time mover with the largest
    share that grew and whose code runs a regular expression; None when none does."""
    best: tuple[float, str] | None = None
    read: dict[str, list[FunctionSpan]] = {}
    for m in movers:
        if m.kind != "self" or m.source != "sampled" or m.delta <= 0 or not m.share:
            continue
        if best is not None and m.share <= best[0]:
            continue
        path, _, qualname = m.function.partition(":")
        if path not in read:
            read[path] = _spans(root, path)
        function = named(read[path], qualname)
        if function is not None and function.uses & REGEX_CALLS:
            best = (m.share, m.function)
    return best
