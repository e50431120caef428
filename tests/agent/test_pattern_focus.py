"""When the profile's time is regex matching, the commits changing a pattern in a file the
launches used carry three quarters of that time's share of the prior mass; a pattern in an
unused file does not count, and where every commit changes one the profile tells nothing. Of
that share, most goes to the commits that write a pattern prone to catastrophic backtracking."""

from __future__ import annotations

import pytest

from agent.phases.pattern_focus import BELIEF, PRONE, pattern_focus
from agent.state import RangeState
from tools.repo.commit_groups import RangeCommit


def _range(patterns: list[dict[str, int]]) -> tuple[list[RangeState], list[RangeCommit]]:
    commits = [
        RangeCommit(sha=f"{i:040x}", subject=f"commit {i}", patterns=p)
        for i, p in enumerate(patterns)
    ]
    states = [RangeState(sha="0" * 40, subject="(good)", verdict="good")]
    states += [RangeState(sha=c.sha, subject=c.subject) for c in commits]
    return states, commits


def used(path: str) -> bool:
    return not path.startswith("docs/")


def test_the_commits_changing_a_pattern_carry_the_regex_times_share() -> None:
    states, commits = _range([{}, {"lib/rules.py": 2}, {"docs/conf.py": 1}, {}, {}])

    said = pattern_focus(states, commits, (0.8, "lib/scan.py:Scanner.iter"), used)

    weights = [s.weight for s in states[1:]]
    assert weights[1] / sum(weights) == pytest.approx(BELIEF * 0.8)
    assert weights[0] == weights[2] == weights[3] == weights[4] == 1.0
    assert said.startswith("the time moved into regular-expression matching (Scanner.iter")
    assert "the 1 of 5 commits" in said and "60% of the prior mass" in said


def test_no_commit_or_every_commit_changing_a_pattern_tells_nothing() -> None:
    for patterns in ([{}, {}], [{"a.py": 1}, {"b.py": 3}]):
        states, commits = _range(patterns)
        assert pattern_focus(states, commits, (0.9, "a.py:f"), used) == ""
        assert [s.weight for s in states] == [1.0] * len(states)


def test_the_commit_writing_a_backtracking_pattern_carries_most_of_it() -> None:
    states, commits = _range([{}, {"lib/rules.py": 2}, {"lib/rules.py": 1}, {}, {}, {}])
    cve = r"r'(?:\\[\\*]|[^*])*'"  # the line that writes it
    commits[2].backtracking = {"lib/rules.py": [cve]}
    commits[3].backtracking = {"docs/conf.py": [r"(a+)+"]}  # unused: not counted

    said = pattern_focus(states, commits, (1.0, "lib/scan.py:Scanner.iter"), used)

    weights = [s.weight for s in states[1:]]
    assert weights[2] / sum(weights) == pytest.approx(BELIEF * PRONE)
    assert (weights[1] + weights[2]) / sum(weights) > BELIEF  # the other changer keeps its lift
    assert weights[3] == 1.0
    assert (
        "1 of them writes a pattern that can backtrack catastrophically, still in the bad tree"
        in said
    )
    assert f"(`{cve}`): they weigh 60%" in said
