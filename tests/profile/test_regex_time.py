"""Time in regex matching: the self time of a function that runs a compiled pattern (mistune's
`Scanner.iter`, which searches with a scanner built from another file's rules), not of one that
only calls other code, nor time that shrank."""

from __future__ import annotations

from pathlib import Path

from agent.profile.regex_time import regex_time
from tests.profile.test_ties import mover

SCANNER = """\
import re


class Scanner(re.Scanner):
    def iter(self, string):
        sc = self.scanner.scanner(string)
        for match in iter(sc.search, None):
            yield match


def render(tokens):
    return "".join(str(t) for t in tokens)
"""


def test_the_largest_self_time_that_runs_a_regex(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/scanner.py").write_text(SCANNER)
    movers = [
        mover("lib/scanner.py:render", 0.99),  # no regex in it
        mover("lib/scanner.py:Scanner.iter", 0.97, kind="inclusive"),
        mover("lib/scanner.py:Scanner.iter", 0.9),
        mover("lib/missing.py:f", 0.95),  # a file that cannot be read says nothing
    ]
    assert regex_time(movers, tmp_path) == (0.9, "lib/scanner.py:Scanner.iter")
    assert regex_time(movers[:2], tmp_path) is None
    shrank = mover("lib/scanner.py:Scanner.iter", 0.9, delta=-5.0)
    assert regex_time([shrank], tmp_path) is None
