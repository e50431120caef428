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

import git

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
    """The lines holding a pattern prone to catastrophic backtracking (tools/repo/backtracking.py)
    that one commit writes, by file: added, their pattern in no line it removes (a pattern it
    only moves or keeps was there before)."""
    before = {p for _, minus in changes.values() for line in minus for p in prone_patterns(line)}
    written: dict[str, list[str]] = {}
    for path, (plus, _) in changes.items():
        new = [line for line in plus if any(p not in before for p in prone_patterns(line))]
        if new:
            written[path] = sorted(new)
    return written


def still_there(repo: git.Repo, lines: set[str], head: str) -> set[str]:
    """Which of `lines` the bad end still holds, in any file (`head`; "HEAD": the working
    tree, uncommitted changes in): a pattern rewritten later did not make the bad end slow."""
    if not lines:
        return set()
    where = [] if head == "HEAD" else [head]
    args = ["-F", "-o", "-h", "--no-color", *(a for line in sorted(lines) for a in ("-e", line))]
    try:
        found = repo.git.grep(*args, *where)
    except git.GitCommandError:  # exit 1: none of them
        return set()
    return set(found.splitlines()) & lines  # -o -h: the matched text alone, one per line
