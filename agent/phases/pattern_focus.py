"""When the time moved into regex matching, the commits that change a pattern weigh more.

The profile names the function that runs the slow regex (agent/profile/regex_time.py), not the
pattern: that is data, written where the function cannot point (a rule table, a class
attribute in another file). So the commits whose own diffs change a pattern line in a file the
traced launches used (tools/repo/pattern_lines.py) share BELIEF of that time's share of the
gap as prior mass; the rest keep theirs. Nothing is dropped: a regex can also grow slow because
code calls it more, or on longer input, and then the bisection spends a probe or two more.
"""

from __future__ import annotations

from collections.abc import Callable

from agent.state import RangeState
from tools.repo.commit_groups import RangeCommit

BELIEF = 0.75  # the chance that a changed pattern made regex-matching time grow, of its share
CAP = 0.9  # never all of the mass: the other commits stay in the search


def pattern_focus(
    states: list[RangeState],
    commits: list[RangeCommit],
    regex: tuple[float, str],
    used: Callable[[str], bool],
) -> str:
    """Move mass onto the states (states[1:], aligned with `commits`) whose commit changes a
    pattern in a used file; the sentence saying so ("" when no commit does)."""
    share, function = regex
    share = min(share * BELIEF, CAP)
    members = [
        state
        for state, commit in zip(states[1:], commits, strict=False)
        if any(used(path) for path in commit.patterns)
    ]
    if not members or len(members) == len(commits):
        return ""
    held = sum(s.weight for s in members)
    others = sum(s.weight for s in states[1:]) - held
    if held <= 0 or others <= 0:
        return ""
    factor = max(1.0, share / (1 - share) * others / held)
    for state in members:
        state.weight *= factor
    now = held * factor / (held * factor + others)
    return (
        f"the time moved into regular-expression matching ({function.partition(':')[2]}, "
        f"{regex[0]:.0%} of the gap): the {len(members)} of {len(commits)} commits that change "
        f"a pattern in a file the launches used weigh {now:.0%} of the prior mass"
    )
