"""Members of a culprit set that cannot be taken out of it: without them the set does not run.

git bisect's skip leaves a range it cannot split; so here: a member whose drop-one configuration
does not build, start or bench, again and again, stays in the set, which is confirmed as one
change, and the note says why.
"""

from __future__ import annotations

from agent.levels import unresolved
from agent.state import Confirmation, InvestigationState, Variant


def cannot_run(config: Variant) -> bool:
    """Unresolved by failures that repeat (a build or start that fails, a bench that errs),
    not by time-outs, which a busy machine alone can cause."""
    timed_out = ("timed out", "not ready after")
    return unresolved(config) and not any(
        word in f.error for f in config.failures for word in timed_out
    )


def say_inseparable(state: InvestigationState, conf: Confirmation, firsts: list[str]) -> None:
    """A group without which the set does not run cannot be told apart from it: it stays in
    the set, which is confirmed as one change, and the note says why (as git bisect's skip
    leaves a range)."""
    for first in firsts:
        without = state.configs[conf.drop_keys[first]]
        failure = without.failures[-1]
        note = (
            f"{', '.join(conf.groups[first])} cannot be separated from the rest of the set: "
            f"{without.label} does not run ({failure.stage}: {failure.error}); confirmed "
            "with it, as one change"
        )
        if note not in state.notes:
            state.notes.append(note)
