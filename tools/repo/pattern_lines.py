"""Which lines of a diff change a regular expression.

A regex that backtracks (a ReDoS advisory's usual shape) is data, not code: the function that
spends the time runs it, and the line that made it slow sits where the pattern is written, often
in another file. A line holds a pattern when it shows syntax only a regex has: a group's
extension (`(?:`, `(?P<`, `(?=`), a negated class (`[^`), a repeated any-character (`.*`, `.+`),
a repeated class escape (`\\s+`, `\\w*`), a lazy quantifier after a group or class (`)*?`), a
counted one (`]{2,}`). Line by line, so the verbose patterns written over many lines of one
triple-quoted string count too. A line moved unchanged (added and removed in one commit) is
not a change.
"""

from __future__ import annotations

import re
from collections import Counter

from tools.repo.backtracking import prone_patterns

REGEX_SYNTAX = re.compile(
    r"\(\?[:P=!<]|\[\^|\.[*+]|\\[sSdDwWbB][*+?{]|[\])][*+]\?|[\])]\{\d*,\d*\}"
)


def holds_pattern(text: str) -> bool:
    return REGEX_SYNTAX.search(text) is not None


def changed_patterns(changes: dict[str, tuple[Counter[str], Counter[str]]]) -> dict[str, int]:
    """How many pattern lines one commit adds or removes in each file: `changes` holds each
    file's (added, removed) stripped line texts (those that hold no pattern are left out
    here). A line the commit moves (the same text added and removed, in one file or between
    two) counts nothing."""
    added: Counter[str] = Counter()
    removed: Counter[str] = Counter()
    for plus, minus in changes.values():
        added.update({t: n for t, n in plus.items() if holds_pattern(t)})
        removed.update({t: n for t, n in minus.items() if holds_pattern(t)})
    new, gone = added - removed, removed - added
    counts: dict[str, int] = {}
    for path, (plus, minus) in changes.items():
        count = sum(min(n, new[t]) for t, n in plus.items() if t in new)
        count += sum(min(n, gone[t]) for t, n in minus.items() if t in gone)
        if count:
            counts[path] = count
    return counts


def written_backtracking(
    changes: dict[str, tuple[Counter[str], Counter[str]]],
) -> dict[str, list[str]]:
    """The patterns prone to catastrophic backtracking (tools/repo/backtracking.py) that one
    commit writes, by file: in a line it adds, and in none it removes (a pattern it only moves
    or keeps was there before)."""
    before = {p for _, minus in changes.values() for line in minus for p in prone_patterns(line)}
    written: dict[str, list[str]] = {}
    for path, (plus, _) in changes.items():
        new = [p for line in plus for p in prone_patterns(line) if p not in before]
        if new:
            written[path] = sorted(set(new))
    return written
