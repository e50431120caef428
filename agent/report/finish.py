"""The end of an investigation: the result object (the CLI's --json, typed in agent.result)
and report.md."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import git

from agent.phases.hot_commit import range_commits
from agent.phases.partial_step import refute_partial_step
from agent.report.bisection import bisection_result, commits_repo, first_bad_commit
from agent.report.markdown_page import render_markdown
from agent.report.markdown_text import inert_html
from agent.report.releases import releases_result
from agent.result import (
    ClearedResult,
    Culprit,
    DroppedResult,
    InvestigationResult,
    LLMResult,
    MetricResult,
    PartResult,
    ResultTarget,
    SetAside,
    UnresolvedResult,
)
from agent.shares import clipped, restored_share, share_between
from agent.state import InvestigationState
from tools.code_paths.dependencies import changed_line_numbers, file_change
from tools.own_files import replace_text
from tools.repo.candidates import Candidate
from tools.repo.commit_info import CommitInfo
from tools.secrets import mask, mask_files, mask_json, mask_text
from tools.visible import visible

if TYPE_CHECKING:
    from agent.graph import Context


# why a member of the set is carried, not named (agent/phases/carried.py)
DELETED = "a deleted file, whose code never runs in the bad state; it came back for its partner"
FOR_REVERT = "reverting its partner needs it too; applying the partner alone to good reproduces"


def _summary(state: InvestigationState, cid: str) -> str:
    c = state.candidate(cid)
    if c.kind == "hunk":
        added = [line.strip() for line in c.added_lines() if line.strip()]
        what = added[0] if added else ("removes lines" if c.removed else "the whole file")
        return f"{c.file} {c.header}: {what}"
    return f"{c.kind} {c.name}: {c.good!r} -> {c.bad!r}"


def _launches(n: int) -> str:
    return f"{n} launch" if n == 1 else f"{n} launches"


def _value(state: InvestigationState, key: str) -> float | None:
    config = state.configs.get(key)
    return config.mean if config and config.values else None


Share = tuple[float, float, float]


def _culprits(state: InvestigationState, repo: git.Repo) -> tuple[list[Culprit], Share | None]:
    conf = state.confirmation
    if conf is None or state.status not in ("confirmed", "suspected"):
        return [], None
    whole = restored_share(state, conf.revert_key)
    first_bad = first_bad_commit(state, repo)  # read once, for every culprit
    out = []
    for cid in [cid for cid in conf.culprits if cid not in conf.carried]:
        c = state.candidate(cid)
        alone = next(
            (
                k
                for k, cfg in state.configs.items()
                if cfg.base == "bad" and cfg.ids == [cid] and cfg.values
            ),
            None,
        )
        share = _share(state, cid, alone, whole)
        where = c.file or c.name
        if where is None:  # a hunk has its file, an env var or a server arg its name
            raise ValueError(f"candidate {cid} has neither a file nor a name")
        inside = state.releases is not None and state.releases.narrowed
        # inside a release, commits are named only where its history was bisected
        commits = [] if inside and state.bisection is None else _commits(state, repo, c, first_bad)
        out.append(
            Culprit(
                kind=c.kind,
                id=cid,
                file=where,
                summary=_summary(state, cid),
                share=None if share is None else clipped(share)[0],
                share_ci=None if share is None else clipped(share)[1:],
                evidence=_culprit_evidence(state, whole) + state.hypotheses[cid].reasons,
                line=_first_line(c),
                diff=("\n".join(c.hunk_lines()) or None) if c.kind == "hunk" else None,
                commit=commits[0] if commits else None,
                commits=commits,
                package=c.origin if inside else None,
            )
        )
    return out, whole


def _commits(
    state: InvestigationState, repo: git.Repo, c: Candidate, first_bad: CommitInfo | None
) -> list[CommitInfo]:
    """The commit(s) that brought a culprit: inside a first bad commit, that commit."""
    b = state.bisection
    if b is None or not b.narrowed:
        return range_commits(state, repo, c)
    return [first_bad] if first_bad is not None else []


def _first_line(c: Candidate) -> int | None:
    """A hunk's first changed line in the bad file (where it only removes: where it did)."""
    if c.kind != "hunk" or c.new_start() is None:
        return None
    _, added = changed_line_numbers(c)
    if added:
        return min(added)
    start = c.new_start() or 0
    context = next((i for i, row in enumerate(c.body_lines()) if row[:1] != " "), 0)
    return start + context


def _share(
    state: InvestigationState, cid: str, alone: str | None, whole: Share | None
) -> Share | None:
    """A member's share: reverted alone; else applied with and without it (confirmation's
    drop-one configs); else, alone in the set, the whole set's."""
    conf = state.confirmation
    assert conf is not None
    if alone:
        return restored_share(state, alone)
    if cid in conf.drop_keys and len(conf.groups.get(cid, [cid])) == 1:
        # the share reproduced with it minus without it
        return share_between(state, conf.apply_key, conf.drop_keys[cid])
    return whole if len(conf.culprits) == 1 else None


def _culprit_evidence(state: InvestigationState, whole: Share | None) -> list[str]:
    """The two confirmation measurements, in words (the same for each culprit)."""
    conf = state.confirmation
    assert conf is not None
    unit = state.unit
    evidence = []
    if whole is not None:
        evidence.append(
            f"reverting exactly {{{', '.join(conf.culprits)}}} gives "
            f"{_value(state, conf.revert_key):.3g} {unit} "
            f"({_launches(len(state.configs[conf.revert_key].values))}): "
            f"{whole[0]:.0%} of the gap restored (95 % interval {whole[1]:.0%} to {whole[2]:.0%})"
        )
    applied = restored_share(state, conf.apply_key)
    if applied is not None:
        named = [cid for cid in conf.culprits if cid not in conf.carried]
        it = "it" if len(named) == len(conf.culprits) else f"{{{', '.join(named)}}}"
        evidence.append(
            f"applying exactly {it} to the good state gives "
            f"{_value(state, conf.apply_key):.3g} {unit} "
            f"({_launches(len(state.configs[conf.apply_key].values))}): "
            f"{1 - applied[0]:.0%} of the regression reproduced"
        )
    return evidence


def _clear_the_rest(state: InvestigationState) -> None:
    conf = state.confirmation
    if conf is None or state.status != "confirmed":
        return
    label = state.configs[conf.revert_key].label
    for cid, h in state.hypotheses.items():
        if cid in conf.carried:
            h.status = "dropped"
            deleted = file_change(state.candidate(cid)) == "deleted"
            why = DELETED if deleted else FOR_REVERT
            h.evidence.append(f"carried with {conf.carried[cid]}: {why}")
        elif cid in conf.culprits:
            h.status = "confirmed"
        elif h.status == "open":
            h.status = "cleared"
            h.evidence.append(
                f"still present in '{label}', which restores the good value, "
                "and absent from 'good + culprits', which reproduces the "
                "regression: it explains none of the gap"
            )


def _not_ruled_out(state: InvestigationState, culprits: list[Culprit]) -> list[str]:
    """A suspected set is not shown to be the whole cause: what else was kept stays open."""
    if state.status != "suspected":
        return []
    conf = state.confirmation
    named = {c.id for c in culprits} | set(conf.undecided if conf else [])
    return [cid for cid, h in state.hypotheses.items() if h.status == "open" and cid not in named]


def _dropped(state: InvestigationState) -> list[DroppedResult]:
    return [
        DroppedResult(
            candidate=d.candidate,
            file=next((c.file for c in state.candidates if c.id == d.candidate), None),
            reason=d.reason,
            evidence=d.evidence,
        )
        for d in state.dropped
    ]


def _set_aside(state: InvestigationState) -> list[SetAside]:
    return [
        SetAside(
            config=config.label, request=launch.request, value=launch.value, why=launch.disturbed
        )
        for config in state.configs.values()
        for launch in config.launches
        if launch.disturbed
    ]


def _unresolved(state: InvestigationState) -> list[UnresolvedResult]:
    return [
        UnresolvedResult(
            config=config.label,
            candidates=config.ids,
            stage=failure.stage,
            error=failure.error,
            log=failure.log,
        )
        for config in state.configs.values()
        for failure in config.failures
    ]


def _result(
    state: InvestigationState,
    ctx: Context,
    repo: git.Repo,
    culprits: list[Culprit],
    whole: Share | None,
) -> InvestigationResult:
    left = None if whole is None else clipped((1 - whole[0], 1 - whole[2], 1 - whole[1]))
    return InvestigationResult(
        session=state.session_id,
        session_dir=state.session_dir,
        target=ResultTarget(repo=ctx.runner.cands.repo, good=ctx.runner.config.target.good),
        status=state.status or "inconclusive",
        symptom=state.symptom,
        metric=MetricResult(
            name=state.metric,
            unit=state.unit,
            bad=_value(state, state.bad_key),
            good=_value(state, state.good_key),
            after_fix=_value(state, state.confirmation.revert_key)
            if state.confirmation and culprits
            else None,
        ),
        culprits=culprits,
        unexplained_share=None if left is None else left[0],
        unexplained_ci=None if left is None else left[1:],
        undecided=state.confirmation.undecided if state.confirmation else [],
        not_ruled_out=_not_ruled_out(state, culprits),
        negligible=state.confirmation.negligible if state.confirmation else {},
        carried=state.confirmation.carried if state.confirmation else {},
        dropped=_dropped(state),
        cleared=[
            ClearedResult(candidate=cid, evidence=h.evidence)
            for cid, h in state.hypotheses.items()
            if h.status == "cleared"
        ],
        launches=state.launches,
        rounds=state.rounds,
        set_aside=_set_aside(state),
        unresolved=_unresolved(state),
        experiments=state.experiments,
        notes=state.notes,
        reproduction=state.reproduction,
        decomposition=_decomposition(state, culprits),
        bisection=bisection_result(state, repo),
        releases=releases_result(state),
        time_moved=[m for m in (state.facts.movers if state.facts else []) if m.kind == "self"],
        llm=None
        if state.llm is None
        else LLMResult.model_validate(
            {**state.llm, "claims": [c.model_dump() for c in state.claims]}
        ),
    )


def finish(state: InvestigationState, ctx: Context) -> None:
    from agent.llm.claims import judge_claims

    repo = commits_repo(state, ctx.repo)  # the package's history, inside its release
    refute_partial_step(state, repo, ctx.log)  # before the culprits name their commit
    culprits, whole = _culprits(state, repo)
    _clear_the_rest(state)
    judge_claims(state, [c.id for c in culprits] if state.status == "confirmed" else [])
    # what --json prints and result.json holds, secrets masked: a plain dict in the state (the
    # graph's report node adds the model's narrative to it)
    state.result = mask(_result(state, ctx, repo, culprits, whole).model_dump())
    save_reports(state, render_markdown(state))


def save_reports(state: InvestigationState, markdown: str) -> None:
    """report.md, result.json and the final state (for `report --html` and `replay --rerun`),
    secrets masked; then every file the launches left in the session is masked too."""
    session = Path(state.session_dir)
    result = InvestigationResult.model_validate(state.result).model_dump()
    replace_text(session / "report.md", inert_html(visible(mask_text(markdown))))
    replace_text(session / "result.json", mask_json(result))
    replace_text(session / "state.json", mask_json(state.model_dump(mode="json"), indent=1))
    mask_files(session / "launches")


def write_narrative(state: InvestigationState, narrative: str) -> None:
    """The model's narrative after the verdict, in report.md, result.json and state.json."""
    head, _, rest = (Path(state.session_dir) / "report.md").read_text().partition("\n\n")
    save_reports(
        state,
        f"{head}\n\n## Narrative (by the model; the verdict is the "
        f"measurements')\n\n{narrative}\n\n{rest}",
    )


def _decomposition(
    state: InvestigationState, culprits: list[Culprit]
) -> dict[str, PartResult] | None:
    from agent.decomposition import decompose

    after = state.confirmation.revert_key if state.confirmation and culprits else None
    return decompose(state, after)
