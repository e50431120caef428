"""Negligible: a member the test shows needed, whose share of the gap is too small to name.

Load noise on a shared CPU gave hunks 1 % [0 % to 2 %] of a real gap, significant on enough
launches; a culprit that explains nothing measurable is a wrong answer. A member is named only
when the low end of its share's 95 % interval reaches `[judge] min_share` of the gap; below it,
it is listed as negligible with its interval, cleared, and the set confirmed without it.
"""

from __future__ import annotations

from agent.shares import contrast_share, share_between
from agent.state import Confirmation, InvestigationState


def group_share(
    state: InvestigationState, conf: Confirmation, first: str, context_key: str
) -> tuple[float, float, float] | None:
    """A group's share of the gap with its 95 % interval: what the set loses without it, over
    both contexts once both are measured."""
    without = state.configs[conf.drop_keys[first]]
    context = state.configs[context_key]  # the group alone of the set, in the bad context
    revert = state.configs[conf.revert_key]
    if context.values and revert.values:
        holding = state.configs[state.bad_key].values + state.configs[conf.apply_key].values
        return contrast_share(state, [(holding, without.values), (context.values, revert.values)])
    return share_between(state, conf.apply_key, without.key)


def set_aside_negligible(
    state: InvestigationState,
    conf: Confirmation,
    needed: dict[str, bool | None],
    contexts: dict[str, str],
) -> bool:
    """Clear the needed groups whose share reaches below min_share (True: the set shrank);
    `contexts`: each group's context config (confirm.context_key)."""
    small = {
        m: share
        for first, need in needed.items()
        if need
        and (share := group_share(state, conf, first, contexts[first]))
        and share[1] < state.min_share
        for m in conf.groups[first]
    }
    if not small:
        return False
    conf.negligible |= {m: [round(v, 3) for v in share] for m, share in small.items()}
    for m, share in small.items():
        state.hypotheses[m].status = "cleared"
        state.hypotheses[m].evidence.append(
            f"negligible: its share of the gap is {share[0]:.1%} [95 %: {share[1]:.1%} to "
            f"{share[2]:.1%}], under the {state.min_share:.0%} a culprit must explain"
        )
    for finding in state.findings:
        finding.ids = [cid for cid in finding.ids if cid not in small]
    state.findings = [f for f in state.findings if f.ids]
    first = next(iter(small))
    state.notes.append(f"{', '.join(small)} negligible: {state.hypotheses[first].evidence[-1]}")
    return True
