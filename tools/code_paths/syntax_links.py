"""Hunks of one Python file that only compile together.

A definition and its use are not the only ties: a module docstring moved below a comment block
is two hunks (one removes it at the top, one adds it further down), and the second without the
first leaves a string before `from __future__ import ...`, which Python refuses to compile. The
same goes for a block re-indented in two hunks, or a bracket opened in one and closed in the
next. Such a tree fails for a reason the regression does not have, so the search must never
build it.

Each hunk is compiled alone on the good file and left out of the bad one (all hunks are against
the same good text, so any subset is a splice, no `git apply` needed). Where one of those does
not compile but both whole files do, the hunk is linked to the nearest hunk that makes it
compile. Compiling only: nothing is run.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

from tools.code_paths.statement_slices import module_of, slice_with
from tools.repo.candidates import Candidate

Tie = tuple[str, str, str]  # (hunk, the hunk it compiles with, why)

# compiling runs at about 300,000 lines a second: the lines compiled are bounded per file and in
# all, so that thousands of hunks in huge files cost seconds, not minutes (past the bound a file
# is not checked, and a tree that does not compile is still an unresolved launch, not a value)
MAX_LINES_PER_FILE = 300_000
MAX_LINES = 1_500_000


def splice(good_lines: Sequence[str], hunks: Sequence[Candidate]) -> list[str]:
    """The good file's lines with `hunks` (one file's, each against the good file) applied."""
    out: list[str] = []
    at = 0  # the next good line (0-based) not yet copied
    for hunk in sorted(hunks, key=lambda h: (h.old_range() or (0, 0))[0]):
        start, count = hunk.old_range() or (0, 0)
        first = _index(start, count)
        out += good_lines[at:first]
        out += hunk.new_lines()
        at = first + count
    return out + list(good_lines[at:])


def compile_error(lines: Sequence[str], path: str) -> str | None:
    """None if the text compiles; else Python's message with its line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes and the like are warnings, not errors
        try:
            compile("\n".join(lines) + "\n", path, "exec", dont_inherit=True)
        except SyntaxError as e:
            return f"line {e.lineno}: {e.msg}"
        except (ValueError, RecursionError, MemoryError) as e:  # NUL bytes, deep nesting
            return str(e) or type(e).__name__
    return None


def _index(start: int, count: int) -> int:
    """Where (0-based) a hunk's lines begin; `-5,0` inserts after line 5."""
    return start - 1 if count else start


class _File:
    """One file's hunks, compiled within its share of the budget."""

    def __init__(self, path: str, good: list[str], hunks: list[Candidate], left: int) -> None:
        self.path, self.good = path, good
        self.hunks = sorted(hunks, key=lambda h: (h.old_range() or (0, 0))[0])
        self.bad = splice(good, self.hunks)
        self.modules = (module_of(good), module_of(self.bad))  # parsed once, sliced per test
        self.left = min(left, MAX_LINES_PER_FILE)  # lines it may still compile

    def error(self, applied: Sequence[Candidate]) -> str | None:
        """Python's message for the good file with `applied` (and no other hunk), or None.
        The statements the odd hunks out touch are compiled first: when they compile, the
        file does (tools/code_paths/statement_slices.py); else the whole file says why."""
        sliced = self._slice(applied)
        if sliced is not None:
            self.left -= sliced.count("\n")
            if compile_error([sliced], self.path) is None:
                return None
        lines = splice(self.good, applied)
        self.left -= len(lines)
        return compile_error(lines, self.path)

    def _slice(self, applied: Sequence[Candidate]) -> str | None:
        """The touched statements with `applied`: hunks added to the good file, or, where
        most are applied, the rest reverted on the bad one."""
        ids = {h.id for h in applied}
        if 2 * len(ids) <= len(self.hunks):
            edits = [(*(h.old_range() or (0, 0)), h.new_lines()) for h in applied]
            sliced = slice_with(self.good, edits, self.modules[0])
            return None if sliced is None else sliced[1]
        reverts, shift = [], 0
        for h in self.hunks:
            start, count = h.old_range() or (0, 0)
            new = h.new_lines()
            if h.id not in ids:
                at = _index(start, count) + shift  # where its lines begin in the bad file
                reverts.append(
                    (at + 1 if new else at, len(new), self.good[at - shift : at - shift + count])
                )
            shift += len(new) - count
        sliced = slice_with(self.bad, reverts, self.modules[1])
        return None if sliced is None else sliced[1]

    def spent(self) -> bool:
        return self.left < len(self.good)

    def nearest(self, hunk: Candidate) -> list[Candidate]:
        start = (hunk.old_range() or (0, 0))[0]
        others = [h for h in self.hunks if h is not hunk]
        return sorted(others, key=lambda h: abs((h.old_range() or (0, 0))[0] - start))


def _partner(f: _File, hunk: Candidate, alone: bool) -> Candidate | None:
    """The nearest other hunk that, moved together with `hunk`, compiles."""
    for other in f.nearest(hunk):
        if f.spent():
            return None
        moved = {hunk.id, other.id}
        applied = [h for h in f.hunks if (h.id in moved) == alone]
        if f.error(applied) is None:
            return other
    return None


def _file_ties(f: _File) -> list[Tie]:
    ties: list[Tie] = []
    tied: set[str] = set()
    for hunk in f.hunks:
        for alone in (True, False):  # on the good file; left out of the bad one
            if f.spent():
                return ties
            if hunk.id in tied:  # its partner's test found it already
                break
            applied = [h for h in f.hunks if (h is hunk) == alone]
            error = f.error(applied)
            if error is None:
                continue
            other = _partner(f, hunk, alone)
            if other is not None:
                state = "alone on the good file" if alone else "left out of the bad file"
                reason = f"{hunk.id} {state} does not compile ({error}); with {other.id} it does"
                ties.append((hunk.id, other.id, reason))
                tied |= {hunk.id, other.id}
    return ties


def compile_ties(
    candidates: list[Candidate],
    good_sources: Mapping[str, str | None],
    bad_sources: Mapping[str, str | None],
) -> list[Tie]:
    """Ties between hunks of one Python file that do not compile apart (both whole files
    compile); `good_sources` / `bad_sources` as for dependencies()."""
    by_file: dict[str, list[Candidate]] = {}
    for c in candidates:
        if c.kind == "hunk" and c.file and c.file.endswith(".py") and c.old_range():
            by_file.setdefault(c.file, []).append(c)
    ties: list[Tie] = []
    left = MAX_LINES
    for path, hunks in sorted(by_file.items()):
        good, bad = good_sources.get(path), bad_sources.get(path)
        if len(hunks) < 2 or good is None or bad is None:  # an added or deleted file: one piece
            continue
        good_lines = good.splitlines()
        f = _File(path, good_lines, hunks, left)
        # a file that does not compile on a side, or whose hunks do not rebuild it, says nothing
        if compile_error(good_lines, path) or compile_error(bad.splitlines(), path):
            continue
        if splice(good_lines, hunks) != bad.splitlines():
            continue
        ties += _file_ties(f)
        left -= min(left, MAX_LINES_PER_FILE) - f.left
    return ties
