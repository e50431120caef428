"""Hunks tied to the function that spends the time: by their lines, or by a name it uses,
including a name assigned from the changed one (Python-Markdown's `HRProcessor`: the culprit
edits the pattern string `RE`, and `test` uses `SEARCH_RE = re.compile(RE)`)."""

from __future__ import annotations

from agent.profile.ties import profile_priors
from tools.profile.movers import Mover
from tools.repo.candidates import Candidate

BAD = '''\
import re


class HRProcessor:
    """Horizontal rules."""

    RE = r"^[ ]{0,3}((-+[ ]{0,2}){3,})[ ]*$"
    SEARCH_RE = re.compile(RE, re.MULTILINE)
    OTHER = 3

    def test(self, block):
        return self.SEARCH_RE.search(block)

    def run(self, block):
        return self.OTHER
'''


def _hunk(cid: str, line: int, old: str, new: str) -> Candidate:
    patch = (
        "diff --git a/pkg/blocks.py b/pkg/blocks.py\n--- a/pkg/blocks.py\n+++ b/pkg/blocks.py\n"
        f"@@ -{line},1 +{line},1 @@\n-{old}\n+{new}\n"
    )
    return Candidate(
        id=cid,
        kind="hunk",
        file="pkg/blocks.py",
        header=f"@@ -{line},1 +{line},1 @@",
        added=1,
        removed=1,
        patch=patch,
    )


def mover(function: str, share: float, kind: str = "self", delta: float | None = None) -> Mover:
    """A sampled mover of `share` of the gap (its time per unit `delta`, by default `share`)."""
    delta = share if delta is None else delta
    return Mover(
        function=function,
        kind=kind,  # type: ignore[arg-type]
        source="sampled",
        bad=max(delta, 0.0),
        good=max(-delta, 0.0),
        delta=delta,
        low=delta / 2,
        high=delta * 1.5,
        share=share,
        change="appeared" if delta > 0 else "vanished",
    )


def test_a_name_compiled_from_the_changed_pattern_ties_the_hunk() -> None:
    lines = BAD.splitlines()
    pattern = _hunk("pattern", 7, lines[6].replace("$", ""), lines[6])
    other = _hunk("other", 9, "    OTHER = 2", lines[8])
    ties = profile_priors(
        [pattern, other],
        {"pkg/blocks.py": BAD},
        [mover("pkg/blocks.py:HRProcessor.test", 0.76)],
        sampled={"pkg/blocks.py:HRProcessor.test"},
        unit="ms",
    )
    assert ties["pattern"].weight == 0.76
    assert "it changes RE, which SEARCH_RE is made from, which it uses" in ties["pattern"].reason
    assert "other" not in ties  # `run` uses OTHER, but `run` did not move
