"""Patterns prone to catastrophic backtracking, read by Python's own regex parser: the shapes
of real ReDoS advisories flagged, their fixed forms and ordinary patterns not; and, on a real
repository, the commit that writes one, not the commit that only moves it."""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path

import git
import pytest

from tools.repo.backtracking import literals, prone, prone_patterns
from tools.repo.commit_groups import commit_groups
from tools.repo.pattern_lines import written_backtracking

MISTUNE_CVE = r"(?:\\[\\*]|[^*])*"  # mistune 2.0.0a1's emphasis (CVE-2022-34749)
MISTUNE_BEFORE = r"(?:\\\*|[^\*])*"  # the line it replaced: linear


@pytest.mark.parametrize(
    "pattern",
    [
        MISTUNE_CVE,
        r"(a+)+$",
        r"^(\w+\s?)+$",
        r"(?:\r\n|\r|\n){2,}",  # `\r\n` is also `\r` then `\n`
        r"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+$",  # OWASP's email
        r"(\d+)*x",
    ],
)
def test_a_repetition_that_matches_a_string_two_ways_is_prone(pattern: str) -> None:
    assert prone(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        MISTUNE_BEFORE,
        r"(?:\\[\\*]|[^*\\])*",  # the fix's shape: the single branch no longer takes a backslash
        r"(a|ab)*c",
        r"(?:\s*,\s*\w+)*",
        r"^[a-z]+\d+$",
        r".*foo.*",
        r"(?:[^<]|<(?!/))*",
        r"(?:a|b)*",  # one class to the parser
        r"(?>a+)+",  # atomic: never backtracks into it
        r"(a++)+",  # possessive
        "(unbalanced",
        "",
    ],
)
def test_linear_patterns_and_garbage_are_not(pattern: str) -> None:
    assert not prone(pattern)


def test_the_flagged_pattern_really_backtracks_and_its_neighbour_does_not() -> None:
    """The flag means what it says: on 24 backslashes and no closing `*`, the pattern mistune
    wrote takes thousands of times longer than the one it replaced (the faster of five runs of
    that one: a run the machine interrupts is not the pattern's)."""
    text = "*a" + "\\" * 24 + "\n"

    def seconds(pattern: str) -> float:
        compiled = re.compile(r"(\*{1,2})(?=[^\s*])(" + pattern + r"[^\s*])\1")
        start = time.perf_counter()
        compiled.search(text)
        return time.perf_counter() - start

    assert seconds(MISTUNE_CVE) > 100 * min(seconds(MISTUNE_BEFORE) for _ in range(5))


def test_the_literals_of_a_source_line() -> None:
    assert literals("    r'(?:\\\\[\\\\*]|[^*])*'") == [MISTUNE_CVE]
    assert literals("x = r'(a' + r'+)+'  # joined") == ["(a", "+)+"]
    assert prone_patterns("x = r'(a' + r'+)+'") == ["(a+)+"]
    assert literals("'''an unterminated verbose") == []
    assert literals("f'{x}' + b'(a+)+'") == []  # an f-string and bytes are not read
    assert prone_patterns("ASTERISK = (r'(a+)+', r'\\d+')") == ["(a+)+"]


def test_written_not_moved() -> None:
    moved = {
        "a.py": (Counter({"r'(a+)+'": 1}), Counter()),
        "b.py": (Counter(), Counter({"r'(a+)+'": 1})),
    }
    assert written_backtracking(moved) == {}
    written = {"inlines.py": (Counter({f"r'{MISTUNE_CVE}'": 1}), Counter({"r'x'": 1}))}
    assert written_backtracking(written) == {"inlines.py": [f"r'{MISTUNE_CVE}'"]}


def test_the_commit_that_writes_it_in_a_real_history(tmp_path: Path) -> None:
    """Written, moved, and written then rewritten: only the commit whose pattern the bad end
    still holds counts."""
    repo = git.Repo.init(tmp_path)

    def commit(files: dict[str, str], message: str) -> str:
        for name, text in files.items():
            (tmp_path / name).write_text(text)
        repo.index.add(list(files))
        return repo.index.commit(message).hexsha

    def emphasis(inner: str, before: str = "") -> str:
        return f"{before}EMPHASIS = (\n    r'(\\*)('\n    r'{inner}'\n    r')\\1'\n)\n"

    good = commit({"inlines.py": emphasis(MISTUNE_BEFORE), "block.py": "X = 1\n"}, "good")
    early = commit({"block.py": "QUOTE = r'( {0,3}>[^\\n]+(\\n[^\\n]+)*\\n*)+'\n"}, "quote")
    commit({"block.py": "QUOTE = r'^ {0,3}>.*$'\n"}, "quote, rewritten")
    cve = commit({"inlines.py": emphasis(MISTUNE_CVE)}, "fix autolink")
    commit({"inlines.py": emphasis(MISTUNE_CVE, before="Y = 2\n")}, "move")
    groups = commit_groups(repo, good, [])
    written = {c.sha: c.backtracking for c in groups.commits}
    assert written[cve] == {"inlines.py": [f"r'{MISTUNE_CVE}'"]}
    assert [sha for sha, found in written.items() if found] == [cve]
    assert early not in [sha for sha, found in written.items() if found]
