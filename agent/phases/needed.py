"""Is each group of a culprit set needed? Applied to good without it, the rest falls short of
the regression; or, once also measured in the bad state's context, one contrast over both."""

from __future__ import annotations

from agent.levels import all_ids, between, ensure_config, noise, unresolved
from agent.shares import contrast_share, restored_share
from agent.state import Confirmation, InvestigationState
from agent.stats import ALPHA, NONE_UP_TO, p_contrast

UNNEEDED_SHARE = 0.15  # "not needed": the share lost without it is shown to be under this


def context_key(state: InvestigationState, conf: Confirmation, first: str) -> str:
    """The bad state with the rest of the set reverted: the group, alone of the set, in the
    bad state's context (against the revert of the whole set, it differs by the group only)."""
    rest = set(conf.culprits) - set(conf.groups[first])
    return ensure_config(state, all_ids(state) - rest).key


def needed(state: InvestigationState, conf: Confirmation, first: str) -> bool | None:
    """Is a group of the set needed? True when the set without it falls significantly short of
    the regression (however small its share: additive causes are all needed; where it still
    reproduces part of it, on two launches, as for any partial verdict); once the group was
    also measured in the bad state's context, by one contrast over both contexts (with it
    against without it, on good and on bad). False when the share lost without it is shown
    small (its 95 % upper bound under UNNEEDED_SHARE of the gap, over both contexts once
    both are measured); None: undecided (the set
    without it does not run, or the data cannot tell a small cause from none)."""
    without_key = conf.drop_keys[first]
    without = state.configs[without_key]
    if unresolved(without) or not without.values:
        return None
    alpha = ALPHA / len(conf.drop_keys)  # each group's test among the set's: Bonferroni
    context = state.configs[context_key(state, conf, first)]
    revert = state.configs[conf.revert_key]
    if context.values and revert.values and not unresolved(context):
        holding = state.configs[state.bad_key].values + state.configs[conf.apply_key].values
        pairs = [(holding, without.values), (context.values, revert.values)]
        effect, p = p_contrast(pairs, noise(state))
        if p <= alpha and (effect > 0) == (state.worse == "higher"):
            return True
        share = contrast_share(state, pairs)  # both contexts bound it tighter than one
        if share is not None and share[2] < UNNEEDED_SHARE:
            return False
    else:
        result = between(state, without_key, state.good_key, state.bad_key)
        if result.p_vs_good <= alpha and result.r < 1:  # short of the bad end
            partial = result.r > NONE_UP_TO  # one launch there may be a disturbed one
            return True if not partial or len(without.values) > 1 else None
    lost = restored_share(state, without_key)  # the share of the gap missing without it
    return False if lost is not None and lost[2] < UNNEEDED_SHARE else None
