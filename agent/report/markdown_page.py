"""report.md: the verdict first (culprits with their commit, place and diff; what was dropped
and cleared), then every configuration measured with its verdict, then what measured nothing,
what was set aside, the model's claims and the notes."""

from __future__ import annotations

from agent.levels import between
from agent.report.bisection import bisection_lines
from agent.report.markdown_text import cell, code, fence
from agent.report.releases import releases_lines
from agent.report.time_moved import time_moved_lines
from agent.result import Culprit, InvestigationResult
from agent.state import InvestigationState, Variant
from tools.repo.commit_info import CommitInfo


def in_unit(unit: str) -> str:
    """` (ms)`; nothing for a metric without a unit (a command bench's count)."""
    return f" ({unit})" if unit else ""


def config_verdict(state: InvestigationState, key: str) -> str:
    """A configuration against the references, in words (the references: themselves)."""
    if key in (state.bad_key, state.good_key):
        return "reference"
    config = state.configs[key]
    low, high = (
        (state.bad_key, state.good_key)
        if config.base == "bad"
        else (
            state.good_key,
            state.bad_key,
        )
    )
    result = between(state, key, low, high)
    bad_base = config.base == "bad"
    words = {
        "restored": "restores the good value" if bad_base else "reproduces the regression",
        "none": "keeps the regression" if bad_base else "stays at the good value",
        "partial": "restores part of the gap" if bad_base else "reproduces part of it",
        "unknown": "unclear",
    }
    return f"{words[result.verdict]} ({result.r:.0%})"


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def _bullets(head: str, evidence: list[str]) -> list[str]:
    return [head] + [f"  - {e}" for e in evidence]


def _interval(ci: list[float] | None) -> str:
    return "" if ci is None else f" [95 %: {ci[0]:.0%} to {ci[1]:.0%}]"


def _commit_line(commit: CommitInfo) -> str:
    pr = f" (PR #{commit.pr})" if commit.pr else ""
    return f'commit `{commit.sha[:12]}` "{commit.subject}"{pr}, {commit.author}, {commit.date}'


def culprit_place(c: Culprit) -> list[str]:
    """A culprit's commit(s) and place."""
    lines = []
    if c.commit is not None:
        of = f" of {c.package.split()[0]}'s history ({c.package})" if c.package else ""
        lines.append(_commit_line(c.commit) + of)
        lines += [f"also lines of {_commit_line(other)}" for other in c.commits[1:]]
    elif c.package is not None:
        lines.append(f"in the package's own files: {c.package}")
    elif c.kind == "hunk":
        lines.append("not committed: a change of the working tree")
    if c.line is not None:
        lines.append(f"at {code(f'{c.file}:{c.line}')}")
    return lines


def _verdict_lines(r: InvestigationResult) -> list[str]:
    """Culprits, dead ends dropped without a launch, and candidates cleared by experiment."""
    lines = []
    if r.culprits:
        lines += ["## Culprits", ""]
        for c in r.culprits:
            share = "-" if c.share is None else f"{c.share:.0%}" + _interval(c.share_ci)
            lines += _bullets(
                f"- **{c.id}** ({c.kind}, share {share}): {c.summary}",
                culprit_place(c) + c.evidence,
            )
            if c.diff:
                lines += ["", *fence(c.diff.splitlines(), "diff", "  ")]
        if r.unexplained_share is not None:
            lines += [
                "",
                f"Unexplained share of the gap: {r.unexplained_share:.0%}"
                + _interval(r.unexplained_ci),
            ]
        lines.append("")
    if r.undecided:
        lines += [
            f"Undecided (found with the culprits; neither shown needed nor not needed): "
            f"{', '.join(r.undecided)}",
            "",
        ]
    if r.carried:
        lines += [
            "Carried with the culprits (needed for the set to build, never a cause: the revert "
            "of a culprit needs them too while applying the culprits alone reproduces the "
            "regression, or deleted files, whose code never runs in the bad state): "
            + ", ".join(f"{cid} (with {partner})" for cid, partner in r.carried.items()),
            "",
        ]
    if r.negligible:
        lines += [
            "Negligible (needed, but explaining under the share a culprit must): "
            + ", ".join(
                f"{cid} {v[0]:.1%} [95 %: {v[1]:.1%} to {v[2]:.1%}]"
                for cid, v in r.negligible.items()
            ),
            "",
        ]
    if r.not_ruled_out:
        lines += [
            "Not ruled out (kept, and cleared by no experiment: the culprits are only "
            f"suspected): {', '.join(r.not_ruled_out)}",
            "",
        ]
    if r.dropped:
        lines += ["## Dropped without a launch", ""]
        for d in r.dropped[:LISTED]:
            lines += _bullets(f"- **{d.candidate}**: {d.reason}", d.evidence)
        lines += _rest(len(r.dropped), "dropped")
    if r.cleared:
        lines += ["## Cleared by experiment", ""]
        for cleared in r.cleared[:LISTED]:
            lines += _bullets(f"- **{cleared.candidate}**", cleared.evidence)
        lines += _rest(len(r.cleared), "cleared")
    return lines


LISTED = 40  # candidates listed with their evidence; 20,000 made a report of 10 MB


def _rest(count: int, what: str) -> list[str]:
    more = count - LISTED
    if more <= 0:
        return [""]
    return [f"- … and {more} more {what}, each with its evidence in result.json", ""]


def _reproduction_lines(r: InvestigationResult) -> list[str]:
    """The references beside the symptom's numbers, and what to change where they differ."""
    rep = r.reproduction
    if rep is None:
        return []
    was = f" (was {rep.symptom_good:g})" if rep.symptom_good else ""
    verdict = "passed" if rep.passed else "failed"
    if not rep.passed and not rep.good_already_regressed and r.status != "not_reproduced":
        verdict = "measured at other numbers than the symptom's (another machine or load?)"
    head = (
        f"Reproduction check: {verdict}: bad {rep.bad:.3g}, "
        f"good {rep.good:.3g} as measured; the symptom says {rep.symptom_bad:g}{was}. "
        f"Workload: {rep.workload}."
    )
    lines = [head, ""]
    if rep.far:
        lines += [f"- {far}" for far in rep.far] + [""]
    if rep.good_already_regressed:
        lines += ["- the good reference is already regressed: it measures at the bad level", ""]
    if r.status == "not_reproduced":
        lines += [f"Not reproduced: {r.notes[-1]}", ""]
    return lines


def _decomposition_lines(r: InvestigationResult) -> list[str]:
    """Speculative decoding: throughput, accept length and cycle time, and their shares."""
    if not r.decomposition:
        return []
    lines = [
        "## Speculative decoding: which part moved",
        "",
        "| part | good | bad | after the fix | share of the tok/s gap | p (bad vs good) |",
        "|---|---|---|---|---|---|",
    ]
    for name, part in r.decomposition.items():
        share = "-" if part.share is None else f"{part.share:.0%}" + _interval(part.share_ci)
        lines.append(
            f"| {name} | {part.good:.3g} | {part.bad:.3g} | {fmt(part.after_fix)} | {share} "
            f"| {part.p:.2g} |"
        )
    return [*lines, ""]


def render_markdown(state: InvestigationState) -> str:
    r = InvestigationResult.model_validate(state.result)
    m = r.metric
    lines = [
        f"# Investigation {state.session_id}: {r.status}",
        "",
        *bisection_lines(r),
        f"Symptom: {code(state.symptom.text)} — metric `{m.name}`{in_unit(m.unit)}: "
        f"bad {fmt(m.bad)}, good {fmt(m.good)}, after the fix "
        f"{fmt(m.after_fix)}. {r.launches} launches.",
        "",
        *_reproduction_lines(r),
        *_verdict_lines(r),
        *releases_lines(r),
        *_decomposition_lines(r),
        *time_moved_lines(r),
    ]
    lines += [
        "## Configurations measured",
        "",
        f"| config | launches | mean{in_unit(m.unit)} | verdict |",
        "|---|---|---|---|",
    ]
    for config in state.configs.values():
        if config.values:
            label = cell(_with_commits(state, config))
            lines.append(
                f"| {label} | {len(config.values)} | {config.mean:.3g} "
                f"| {config_verdict(state, config.key)} |"
            )
    if r.unresolved:
        lines += ["", "## Launches that measured nothing (unresolved)", ""]
        lines += [
            f"- {u.config}: {u.stage}: {u.error}"
            + (f" (log: {u.log})" if u.log and u.log not in u.error else "")
            for u in r.unresolved
        ]
    if r.set_aside:
        lines += ["", "## Launches set aside (disturbed: not counted)", ""]
        lines += [f"- {s.config}, request {s.request}: {s.why}" for s in r.set_aside]
    if state.claims:
        lines += ["", "## The model's claims, judged by measurement", ""]
        for claim in state.claims:
            lines += _bullets(
                f'- **{claim.candidate}** ({claim.weight:g}/10, "{claim.reason}"): {claim.status}',
                claim.evidence,
            )
    if state.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in state.notes]
    return "\n".join(lines) + "\n"


def _with_commits(state: InvestigationState, config: Variant) -> str:
    """A configuration's label, with the commits its changes come from on a commit range (a
    probe that reverts the latest commits is the tree of an earlier commit)."""
    from agent.phases.commit_split import describe  # the phases import this module's users

    commits = describe(state, config.ids) if state.commits.commits else ""
    return f"{config.label} (from {commits})" if commits else config.label
