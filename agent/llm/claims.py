"""What the model claims, folded into the priors; and, at the end, judged by measurements."""

from __future__ import annotations

from collections.abc import Callable

from agent.levels import between, held
from agent.llm.reasoner import LLMReasoner, Ranking
from agent.shares import restored_share
from agent.state import Claim, InvestigationState

CLAIM_WEIGHT = 8  # a weight this high is the model asserting a cause


def rank_with(
    reasoner: LLMReasoner | None, state: InvestigationState, log: Callable[..., None]
) -> None:
    """The model's rankings on the priors, and what it cost so far (no reasoner: nothing)."""
    if reasoner is not None:
        apply_rankings(state, reasoner.rank(state), log)
        state.llm = {"model": reasoner.model.name, **reasoner.usage.model_dump()}


def apply_rankings(
    state: InvestigationState, rankings: list[Ranking] | None, log: Callable[..., None]
) -> None:
    if not rankings:
        return
    for r in rankings:
        h = state.hypotheses[r.candidate]
        if h.status == "open":
            h.prior *= (1 + r.weight) / 6
        h.reasons.append(f"model: {r.weight:g}/10, {r.reason}")
        log(
            "hypothesize",
            "hypothesis",
            f"model ranks {r.candidate} {r.weight:g}/10: {r.reason}",
            candidate=r.candidate,
            weight=r.weight,
        )
        if r.weight >= CLAIM_WEIGHT:
            state.claims.append(Claim(candidate=r.candidate, weight=r.weight, reason=r.reason))


def judge_claims(state: InvestigationState, culprits: list[str]) -> None:
    """Each claim is supported (it is a culprit) or refuted by a measured configuration."""
    good = state.configs.get(state.good_key)
    if good is None or not good.values:
        return  # nothing measured yet (an investigation stopped early)
    unit = state.unit
    for claim in state.claims:
        if claim.candidate in culprits:
            claim.status = "supported"
            claim.evidence = ["confirmed as a culprit by the experiments"]
            continue
        evidence = []
        for config in state.configs.values():
            if not config.values or config.key in (state.bad_key, state.good_key):
                continue
            has = claim.candidate in held(state, config.key)
            share = (restored_share(state, config.key) or (0.0,))[0]
            # by the config's verdict, not its noise pool (which needs it indistinguishable)
            verdict = between(state, config.key, state.bad_key, state.good_key).verdict
            if has and verdict == "restored":
                evidence.append(
                    f"'{config.label}' still holds {claim.candidate} and measures "
                    f"{config.mean:.3g} {unit}: {share:.0%} of the gap restored"
                )
            elif not has and verdict == "none":
                evidence.append(
                    f"'{config.label}' lacks {claim.candidate} and measures "
                    f"{config.mean:.3g} {unit}: the regression without it"
                )
        drop = next((d for d in state.dropped if d.candidate == claim.candidate), None)
        if drop:
            evidence += [f"dropped before any launch: {drop.reason}", *drop.evidence]
        claim.status = "refuted" if evidence else "unresolved"
        claim.evidence = evidence
