"""When the time moved into regex matching, the commits that change a pattern weigh more.

The profile names the function that runs the slow regex (agent/profile/regex_time.py), not the
pattern: that is data, written where the function cannot point (a rule table, a class
attribute in another file). So the commits whose own diffs change a pattern line in a file the
traced launches used (tools/repo/pattern_lines.py) share BELIEF of that time's share of the
gap as prior mass; the rest keep theirs. Of that, PRONE goes to the commits that write a
pattern that can backtrack catastrophically (tools/repo/backtracking.py): mistune's
CVE-2022-34749 is one alternation of 82 commits, 15 of them changing a pattern after the
rewrite. Nothing is dropped: a regex can also grow slow because code calls it more, or on
longer input, and then the bisection spends a probe or two more.
"""

from __future__ import annotations

from collections.abc import Callable

from agent.state import RangeState
from tools.repo.commit_groups import RangeCommit

BELIEF = 0.75  # the chance that a changed pattern made regex-matching time grow, of its share
PRONE = 0.8  # of that, the chance it is a pattern written to backtrack catastrophically
CAP = 0.9  # never all of the mass: the other commits stay in the search


def pattern_focus(
    states: list[RangeState],
    commits: list[RangeCommit],
    regex: tuple[float, str],
    used: Callable[[str], bool],
) -> str:
    """Move mass onto the states (states[1:], aligned with `commits`) whose commit changes a
    pattern in a used file, and most of it onto those that write a pattern prone to
    catastrophic backtracking (tools/repo/backtracking.py); the sentence saying so ("" when
    no commit changes a pattern)."""
    share, function = regex
    share = min(share * BELIEF, CAP)
    pairs = list(zip(states[1:], commits, strict=False))
    members = [state for state, commit in pairs if any(used(p) for p in commit.patterns)]
    if not members or len(members) == len(commits):
        return ""
    now = _lift(states[1:], members, share)
    if now is None:
        return ""
    said = (
        f"the time moved into regular-expression matching ({function.partition(':')[2]}, "
        f"{regex[0]:.0%} of the gap): the {len(members)} of {len(commits)} commits that change "
        f"a pattern in a file the launches used weigh {now:.0%} of the prior mass"
    )
    written = [(state, _prone_pattern(commit, used)) for state, commit in pairs]
    prone = [(state, pattern) for state, pattern in written if pattern]
    if not prone or len(prone) == len(members):
        return said
    lifted = _lift(states[1:], [state for state, _ in prone], share * PRONE)
    first = prone[0][1]
    return said + (
        f"; {len(prone)} of them {'writes' if len(prone) == 1 else 'write'} a pattern that "
        "can backtrack catastrophically, still in the bad tree "
        f"(`{first}`{' and others' if len(prone) > 1 else ''}): they weigh {lifted:.0%}"
    )


def _prone_pattern(commit: RangeCommit, used: Callable[[str], bool]) -> str:
    """The first line with a pattern prone to backtracking that `commit` writes in a used file
    and the bad end still holds, or ""."""
    return next((ps[0] for path, ps in commit.backtracking.items() if used(path) and ps), "")


def _lift(states: list[RangeState], chosen: list[RangeState], share: float) -> float | None:
    """Scale `chosen` (never down) so that they hold `share` of the mass of `states`; the share
    they hold then (None when either side holds none)."""
    held = sum(s.weight for s in chosen)
    others = sum(s.weight for s in states) - held
    if held <= 0 or others <= 0:
        return None
    factor = max(1.0, share / (1 - share) * others / held)
    for state in chosen:
        state.weight *= factor
    return held * factor / (held * factor + others)
