"""Hypothesize: every candidate is a hypothesis with a prior; off-path ones are dropped, with
the evidence quoted (a prior, not a proof: confirmation brings them back if needed)."""

from __future__ import annotations

from pathlib import Path

import git

from agent.priors import prior
from agent.relevance import assess, env_arrival
from agent.state import Hypothesis, InvestigationState


def _good_source(repo: git.Repo, sha: str, path: str) -> str | None:
    try:
        return repo.git.show(f"{sha}:{path}", strip_newline_in_stdout=False)
    except git.GitCommandError:
        return None


def _bad_source(repo_root: Path, path: str) -> list[str]:
    try:
        return (repo_root / path).read_text(errors="replace").splitlines()
    except OSError:
        return []


def hypothesize(state: InvestigationState, repo: git.Repo) -> list[str]:
    """Fill state.hypotheses and state.dropped; return sentences for the transcript."""
    root = Path(repo.working_tree_dir or ".")
    said = []
    for c in state.candidates:
        facts = state.facts
        if facts is None:  # gather reads the facts before this phase
            raise RuntimeError("hypothesize needs the facts of the bad state (gather)")
        p = prior(c, state.metric, facts.server_args)
        hypothesis = Hypothesis(candidate=c.id, prior=p.weight, reasons=p.reasons)
        if c.kind == "hunk":
            verdict = assess(
                c,
                facts,
                _good_source(repo, state.good_sha, c.file or ""),
                _bad_source(root, c.file or ""),
                root,
            )
        else:
            verdict = assess(c, facts, None, [])
        if verdict.on_path is False:
            hypothesis.status = "dropped"
            hypothesis.evidence = verdict.evidence
            state.dropped.append(verdict)
            said.append(f"dropped {c.id}: {verdict.reason}; " + "; ".join(verdict.evidence))
        state.hypotheses[c.id] = hypothesis
        said += _arrival(state, c)
    return said


SHOWN_EACH = 10  # past this many, the terminal summarises (the transcript keeps each one)


def dropped_summary(state: InvestigationState, examples: int = 3) -> list[str]:
    """One line per reason for dropping: how many, and a few of them."""
    by_reason: dict[str, list[str]] = {}
    for verdict in state.dropped:
        by_reason.setdefault(verdict.reason, []).append(verdict.candidate)
    return [
        f"dropped {len(ids)} candidate{'s' * (len(ids) > 1)}: {reason} (e.g. "
        f"{', '.join(ids[:examples])}{', ...' if len(ids) > examples else ''})"
        for reason, ids in sorted(by_reason.items(), key=lambda kv: -len(kv[1]))
    ]


def _arrival(state: InvestigationState, c) -> list[str]:
    """Did the env vars this candidate sets reach the workers? Recorded either way."""
    if state.facts is None or state.facts.workers is None:
        return []
    pairs = (
        [(c.name, c.bad)]
        if c.kind == "env" and c.bad is not None
        else (c.env_assignments() if c.kind == "hunk" else [])
    )
    said = []
    for name, value in pairs:
        arrival = env_arrival(name or "", value or "", state.facts.workers)
        if arrival is None:
            text = (
                f"{c.id} sets {name}={value}: the workers' environment was not read for "
                f"{name}, so whether it arrived is unknown"
            )
        else:
            got, total = arrival
            text = (
                f"{c.id} sets {name}={value}: {'reached' if got else 'did not reach'} "
                f"{got}/{total} scheduler processes (worker env of the first bad launch)"
            )
        state.hypotheses[c.id].evidence.append(text)
        said.append(text)
    return said
