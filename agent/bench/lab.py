"""`debug-agent lab bench`: the engine on generated scenarios, scored against the lab truth,
with the launches git bisect and plain ddmin would need on the same candidates (noise-free)."""

from __future__ import annotations

import json
import statistics
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from agent.bench.baselines import bisect_launches, ddmin_launches, range_baseline
from agent.session import Session
from tools.config import load_config
from tools.lab.create import create_lab
from tools.lab.truth import Truth, TruthEntry, load_truth
from tools.repo.candidates import Candidate, commit_changes, list_candidates, own_paths
from tools.repo.worktree import open_repo


class ScenarioScore(BaseModel):
    seed: int
    scenario: str
    candidates: int
    outcome: str  # correct | wrong | inconclusive
    status: str
    named: list[str]
    truth: list[str]
    companions: list[str]  # may be named beside the truth: they must travel with a culprit
    start_failure_rate: float  # of each launch (flaky start-ups)
    launches: int
    bisect_launches: int
    ddmin_launches: int
    # range labs: noise-free git bisect over the commits (skipping those that do not start)
    # plus ddmin inside each culprit commit
    range_baseline: int | None = None
    rounds: int = 0  # rounds of launches (with --slots K: up to K launches each)
    # launches of the search: beyond the references, their replicates and the confirmation
    search_launches: int = 0
    # with --slots: the same scenario run serially, for comparison
    serial_outcome: str | None = None
    serial_launches: int | None = None


def _entry_keys(entries: list[TruthEntry]) -> set[str]:
    return {e.env.split("=")[0] if e.env else f"{e.file} {e.hunk}" for e in entries}


def outcome(
    status: str, named: set[str], truth: Truth, undecided: frozenset[str] | set[str] = frozenset()
) -> str:
    """correct: every culprit named, and nothing else but companions (hunks a culprit's
    revert needs); or no regression found where there is none. wrong: a named candidate that
    is not a culprit or companion, or a set that misses a culprit without saying so.
    inconclusive: nothing named, or culprits missing only among those it names as undecided
    (found with the others but neither shown needed nor not needed) or, beside a suspected
    set, as not ruled out: nothing false is claimed."""
    culprits = _entry_keys(truth.culprits)
    allowed = culprits | _entry_keys(truth.companions)
    if status in ("confirmed", "suspected") and named:
        if not truth.regression or not named <= allowed:
            return "wrong"
        if culprits <= named:
            return "correct"
        return "inconclusive" if culprits <= named | undecided else "wrong"
    if not truth.regression and status == "no_regression":
        return "correct"
    return "inconclusive"


def _with_narrowed(result: dict, lab: Path, by_id: dict[str, Candidate]) -> None:
    """The first bad commit's hunks, where the bisection narrowed to it, each under the range
    hunk that changes the same lines (the truth names the range's hunks)."""
    b = result.get("bisection") or {}
    if not b.get("first_bad") or not b.get("parent"):
        return
    repo = open_repo(lab)
    own = own_paths(Path(str(repo.working_tree_dir)), lab)
    same = {(c.file, tuple(c.changed_lines())): c for c in by_id.values() if c.kind == "hunk"}
    for c in commit_changes(repo, b["parent"], b["first_bad"]["sha"], own).candidates:
        by_id.setdefault(c.id, same.get((c.file, tuple(c.changed_lines())), c))


def _named_keys(result: dict, by_id: dict, field: str = "culprits") -> set[str]:
    keys = set()
    for c in result.get(field) or []:
        cand = by_id[c if isinstance(c, str) else c["id"]]
        keys.add(cand.name if cand.kind == "env" else f"{cand.file} {cand.header}")
    return keys


def _commits_right(result: dict, by_id: dict, want: dict[str, str]) -> bool:
    """Every named culprit hunk is attributed to the commit that brought it."""
    for c in result.get("culprits") or []:
        cand = by_id[c["id"]]
        sha = (c.get("commit") or {}).get("sha")
        if f"{cand.file} {cand.header}" in want and sha != want[f"{cand.file} {cand.header}"]:
            return False
    return True


def search_launches(session_dir: Path) -> int:
    """The launches a session spent searching: each whose plan was not the references'
    calibration or the confirmation (the traced references are not launches of the plan)."""
    planned, searching = 0, True
    for line in (session_dir / "transcript.jsonl").read_text().splitlines()[1:]:
        event = json.loads(line)
        if event.get("node") == "plan" and event.get("kind") == "thought":
            searching = not str(event.get("text", "")).startswith(("calibrate:", "confirm:"))
        elif event.get("kind") == "experiment" and searching:
            planned += 1
    return planned


def _without_profiles(lab: Path) -> None:
    """The lab's config with [profile] off (the bench run without profiles, to compare)."""
    config = lab / "debug-agent.toml"
    text = config.read_text()
    if "\n[profile]\n" in text:
        text = text.replace("\n[profile]\n", "\n[profile]\nenabled = false\n", 1)
    else:
        text += "\n[profile]\nenabled = false\n"
    config.write_text(text)


def score_scenario(
    seed: int,
    noise: float | None,
    work: Path,
    ranges: bool = False,
    slots: int = 1,
    profiles: bool = True,
) -> ScenarioScore:
    lab = work / f"lab-{seed}-{slots}"
    create_lab("range" if ranges else "random", lab, seed=seed, noise=noise)
    if not profiles:
        _without_profiles(lab)
    if slots > 1:  # the experiments as Ray tasks, on the Ray run_bench started
        with (lab / "debug-agent.toml").open("a") as config:
            config.write(f'\n[cluster]\nray = "local"\nslots = {slots}\n')
    truth = load_truth(lab)
    cands = list_candidates(lab, load_config(lab))
    by_id = {c.id: c for c in cands.candidates}
    with Session.start(
        lab,
        truth.symptom or "verify 29ms",
        work / "sessions",
        lab="range" if ranges else "random",
        max_launches=40,
    ) as session:
        result = session.run_to_end()
    _with_narrowed(result, lab, by_id)
    named, wanted = _named_keys(result, by_id), _entry_keys(truth.culprits)
    order = [f"{c.file} {c.header}" if c.kind == "hunk" else c.name for c in cands.candidates]
    positions = {i for i, key in enumerate(order) if key in wanted}
    together = truth.scenario in ("random:pair", "random:helper-pair")  # slow only together
    said = _named_keys(result, by_id, "undecided") | _named_keys(result, by_id, "not_ruled_out")
    verdict = outcome(result["status"], named, truth, said)
    if truth.range and verdict == "correct":
        right = _commits_right(result, by_id, truth.range.culprit_commits)
        verdict = "correct" if right else "wrong"
    return ScenarioScore(
        seed=seed,
        scenario=truth.scenario + ("+flaky-start" if truth.start_failure_rate else ""),
        candidates=len(cands.candidates),
        outcome=verdict,
        status=result["status"],
        named=sorted(named),
        truth=sorted(wanted),
        companions=sorted(_entry_keys(truth.companions)),
        start_failure_rate=truth.start_failure_rate,
        launches=result["launches"],
        bisect_launches=bisect_launches(len(cands.candidates)),
        ddmin_launches=ddmin_launches(len(cands.candidates), positions, together),
        range_baseline=range_baseline(truth.range) if truth.range else None,
        rounds=result.get("rounds") or result["launches"],
        search_launches=search_launches(Path(result["session_dir"])),
    )


def outcomes(scores: list[ScenarioScore]) -> dict:
    """How many were right, wrong, inconclusive; the median launches beside the baseline's."""
    return {
        "correct": sum(s.outcome == "correct" for s in scores),
        "wrong": sum(s.outcome == "wrong" for s in scores),
        "inconclusive": sum(s.outcome == "inconclusive" for s in scores),
        "median_launches": statistics.median(s.launches for s in scores),
        "median_bisect_launches": statistics.median(s.bisect_launches for s in scores),
        "median_search_launches": statistics.median(s.search_launches for s in scores),
    }


def run_bench(
    scenarios: int,
    seed: int,
    noise: float | None,
    on_score=None,
    ranges: bool = False,
    slots: int = 1,
    profiles: bool = True,
) -> tuple[list[ScenarioScore], dict]:
    """Each scenario scored; with `slots`, run serially too and set beside it."""
    scores = []
    with tempfile.TemporaryDirectory(prefix="debug-agent-bench-") as tmp, _ray(slots):
        for i in range(scenarios):
            score = score_scenario(seed + i, noise, Path(tmp), ranges, slots, profiles)
            if slots > 1:
                serial = score_scenario(seed + i, noise, Path(tmp), ranges)
                score.serial_outcome, score.serial_launches = serial.outcome, serial.launches
            scores.append(score)
            if on_score:
                on_score(score)
    summary = {
        **outcomes(scores),
        "median_rounds": statistics.median(s.rounds for s in scores),
        "median_ddmin_launches": statistics.median(s.ddmin_launches for s in scores),
    }
    if slots > 1:
        summary["slots"] = slots
        summary["median_serial_launches"] = statistics.median(
            s.serial_launches or 0 for s in scores
        )
        summary["serial_correct"] = sum(s.serial_outcome == "correct" for s in scores)
        summary["same_outcome"] = sum(s.serial_outcome == s.outcome for s in scores)
    if ranges:
        summary["median_range_baseline"] = statistics.median(s.range_baseline or 0 for s in scores)
    return scores, summary


@contextmanager
def _ray(slots: int) -> Iterator[None]:
    """One local Ray for the whole bench (each session leaves it running)."""
    if slots == 1:
        yield
        return
    import ray

    from tools.cluster.ray_pool import connect

    connect("local")
    try:
        yield
    finally:
        ray.shutdown()
