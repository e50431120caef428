"""Hypothesize: every candidate is a hypothesis with a prior; off-path ones are dropped, with
the evidence quoted (a prior, not a proof: confirmation brings them back if needed).

Before anything is dropped, the hunks that must move together are linked from the code
(tools/code_paths/dependencies.py); a candidate linked to a kept one is kept too, whatever the
evidence against it, since a tree holding one end of a link without the other fails for a
reason the regression does not have.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import git

from agent.priors import prior
from agent.profile.controls import control_priors
from agent.profile.ties import Tie, profile_priors
from agent.relevance import (
    NEVER_LOADED,
    Relevance,
    assess,
    env_arrival,
    ray_copy_note,
)
from agent.shared_priors import share_existence_priors
from agent.state import Hypothesis, InvestigationState, Link
from tools.code_paths.dependencies import dependencies
from tools.proc.worker_env import WorkerEnv
from tools.repo.candidates import Candidate
from tools.repo.commit_groups import commit_groups
from tools.stack.package_source import release_folder, release_shas
from tools.stack.requires import package_links

# the trace's verdicts: no process used it
UNUSED = ("file never imported", "file never opened", NEVER_LOADED)


def _good_source(repo: git.Repo, sha: str, path: str) -> str | None:
    """`path` as commit `sha` holds it; None where it has no such file. Read through
    GitPython's object database (one `git cat-file --batch` for all), not a `git show` per
    file: a release range holds hundreds of files."""
    try:
        blob = repo.commit(sha).tree / path
        return blob.data_stream.read().decode(errors="replace") if blob.type == "blob" else None
    except (KeyError, ValueError, git.GitCommandError, git.BadName):
        return None


def _bad_source(repo_root: Path, path: str) -> str | None:
    try:
        return (repo_root / path).read_text(errors="replace")
    except OSError:
        return None


def _verdicts(
    state: InvestigationState, repo: git.Repo
) -> tuple[dict[str, Relevance], list[Link], dict[str, str | None]]:
    """Each candidate's relevance and the links between candidates, each file read once; and
    the bad side's sources of the hunks' files."""
    facts = state.facts
    if facts is None:  # gather reads the facts before this phase
        raise RuntimeError("hypothesize needs the facts of the bad state (gather)")
    b = state.bisection
    at = b.first_bad.sha if b is not None and b.narrowed else None  # None: the working tree
    repo, at = _inside_release(state, repo, at)
    root = Path(repo.working_tree_dir or ".")
    hunks = [c for c in state.candidates if c.kind == "hunk"]
    files = sorted({c.file or "" for c in hunks})
    good = {path: _good_source(repo, state.good_sha, path) for path in files}
    bad = {
        path: _bad_source(root, path) if at is None else _good_source(repo, at, path)
        for path in files
    }
    verdicts = {
        c.id: assess(c, facts, good[c.file or ""], (bad[c.file or ""] or "").splitlines(), root)
        if c.kind == "hunk"
        else assess(c, facts, None, [])
        for c in state.candidates
    }
    if b is not None and b.narrowed:
        _untraced_files(verdicts, state, repo, root, b.range_good_sha)
    share_existence_priors(verdicts, {c.id: c.file for c in hunks if c.file})
    links = [Link(**link.model_dump()) for link in dependencies(hunks, good, bad).links]
    requires = facts.requires
    pins = package_links(state.candidates, requires.get("bad", {}), requires.get("good", {}))
    links += [Link(**link.model_dump()) for link in pins]
    return verdicts, links, bad


def _inside_release(
    state: InvestigationState, repo: git.Repo, at: str | None
) -> tuple[git.Repo, str | None]:
    """Where the hunks' sources are read: inside a package's first slow release, its two
    releases' repository (tools/stack/package_source.py) at the slow one."""
    r = state.releases
    if r is None or not r.narrowed:
        return repo, at
    if state.package_source is not None:
        source, head = state.package_source
        return git.Repo(source), at or head
    folder = release_folder(r.package, r.parent.sha or "", r.first_bad.sha or "")
    shas = release_shas(folder)
    return (git.Repo(folder), shas[-1]) if shas else (repo, at)


def _untraced_files(
    verdicts: dict[str, Relevance], state: InvestigationState, repo: git.Repo, root: Path, good: str
) -> None:
    """A commit's file that neither traced tree (the range's bad and good ends) holds: the
    import trace never saw it exist, so it says nothing of it (no drop on that evidence)."""
    for c in state.candidates:
        verdict = verdicts[c.id]
        if verdict.on_path is not False or c.file is None:
            continue
        if _bad_source(root, c.file) is None and _good_source(repo, good, c.file) is None:
            verdicts[c.id] = Relevance(
                candidate=c.id,
                on_path=None,
                reason="neither traced tree holds this file (it exists only inside the range)",
                evidence=[],
            )


def kept_by_links(verdicts: dict[str, Relevance], links: list[Link]) -> dict[str, Link]:
    """Candidates judged off-path that links tie, directly or through others, to a kept one;
    each with the link it was reached by."""
    near: dict[str, list[Link]] = {}
    for link in links:
        near.setdefault(link.a, []).append(link)
        near.setdefault(link.b, []).append(link)
    queue = deque(cid for cid, v in verdicts.items() if v.on_path is not False)
    seen, reached = set(queue), {}
    while queue:
        here = queue.popleft()
        for link in near.get(here, []):
            other = link.b if link.a == here else link.a
            if other in verdicts and other not in seen:
                seen.add(other)
                reached[other] = link
                queue.append(other)
    return reached


def _profile_ties(state: InvestigationState, bad_sources: dict[str, str | None]) -> dict[str, Tie]:
    """The profile's prior factors: for the hunks by their code (agent/profile/ties.py), for
    whatever sets an env var or an argument by what it controls (agent/profile/controls.py)."""
    facts = state.facts
    if facts is None or not facts.movers:
        return {}
    profiles = [t.profile for t in (facts.trace, facts.good_trace) if t and t.profile]
    roots = {root for p in profiles for root in p.roots}  # whose time says nothing about where
    sampled = {function for p in profiles for function in p.functions} - roots
    worse = state.worse == "higher"
    found = profile_priors(state.candidates, bad_sources, facts.movers, sampled, state.unit, worse)
    for cid, tie in control_priors(state.candidates, facts.movers, state.unit, worse).items():
        if cid not in found or tie.factor > found[cid].factor:
            found[cid] = tie
    return found


def link_sentence(link: Link) -> str:
    return f"{link.a} and {link.b} move together: {link.reason}"


def hypothesize(state: InvestigationState, repo: git.Repo) -> list[str]:
    """Fill state.hypotheses, state.links and state.dropped; return sentences for the
    transcript."""
    verdicts, state.links, bad_sources = _verdicts(state, repo)
    said = [link_sentence(link) for link in state.links]
    ties = _profile_ties(state, bad_sources)
    inside_release = state.releases is not None and state.releases.narrowed
    if state.bisection is None and not inside_release:  # inside a commit, the range is known
        state.commits = commit_groups(repo, state.good_sha, state.candidates)
    rescued = kept_by_links(verdicts, state.links)
    for c in state.candidates:
        p = prior(c, state.metric, state.facts.server_args if state.facts else None)
        verdict = verdicts[c.id]
        hypothesis = Hypothesis(candidate=c.id, prior=p.weight, reasons=p.reasons)
        if verdict.prior_factor != 1.0:  # weak evidence: it orders the search, nothing more
            hypothesis.prior *= verdict.prior_factor
            hypothesis.reasons.append(verdict.reason)
            hypothesis.evidence += verdict.evidence
        if c.id in ties:  # where the time moved: it orders the search, never drops
            tie = ties[c.id]
            hypothesis.prior *= tie.factor
            hypothesis.reasons.append(tie.reason)
            hypothesis.profile_weight = tie.weight
        if c.id in rescued and verdict.reason in UNUSED:
            # links never override the trace: no process loaded the file, so no launch of
            # the server runs it; it travels with its partner and is never a cause
            link = rescued[c.id]
            partner = link.b if link.a == c.id else link.a
            hypothesis.status, hypothesis.carried_with = "dropped", partner
            hypothesis.evidence = [*verdict.evidence, f"carried with {partner} ({link.reason})"]
            state.dropped.append(verdict.model_copy(update={"evidence": hypothesis.evidence}))
            said.append(f"dropped {c.id}: {verdict.reason}; carried with {partner}, never a cause")
        elif c.id in rescued:
            link = rescued[c.id]
            hypothesis.evidence.append(
                f"kept although {verdict.reason} ({'; '.join(verdict.evidence)}): "
                f"it moves with {link.b if link.a == c.id else link.a} ({link.reason})"
            )
            said.append(f"{c.id}: {hypothesis.evidence[-1]}")
        elif verdict.on_path is False:
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


def links_summary(state: InvestigationState, examples: int = 3) -> list[str]:
    """The links in one line: how many, and a few of them (the transcript keeps each one)."""
    if not state.links:
        return []
    shown = "; ".join(link.reason for link in state.links[:examples])
    more = "; ..." if len(state.links) > examples else ""
    count = len(state.links)
    return [
        f"{count} link{'s' * (count > 1)} between candidates that move together (e.g. "
        f"{shown}{more})"
    ]


def _when(workers: WorkerEnv) -> str:
    if workers.after_start:
        return "as each process had it after start-up"
    return "as each process started: what a worker sets in itself later is not seen"


def _arrival(state: InvestigationState, c: Candidate) -> list[str]:
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
            note = ray_copy_note(name or "", state.facts)
            text += f"; {note}" if note else ""
        else:
            got, total, who = arrival
            text = (
                f"{c.id} sets {name}={value}: {'reached' if got else 'did not reach'} "
                f"{got}/{total} {who} (worker env of the first bad launch, "
                f"{_when(state.facts.workers)})"
            )
        state.hypotheses[c.id].evidence.append(text)
        said.append(text)
    return said
