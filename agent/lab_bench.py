"""`debug-agent lab bench`: the engine on generated scenarios, scored against the lab truth,
with the launches git bisect and plain ddmin would need on the same candidates (noise-free)."""

from __future__ import annotations

import math
import statistics
import tempfile
from pathlib import Path

from pydantic import BaseModel

from agent.session import Session
from tools.config import load_config
from tools.lab.create import create_lab
from tools.lab.truth import RangeTruth, Truth, TruthEntry, load_truth
from tools.repo.candidates import list_candidates


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


def _entry_keys(entries: list[TruthEntry]) -> set[str]:
    return {e.env.split("=")[0] if e.env else f"{e.file} {e.hunk}" for e in entries}


def outcome(
    status: str, named: set[str], truth: Truth, undecided: frozenset[str] | set[str] = frozenset()
) -> str:
    """correct: every culprit named, and nothing else but companions (hunks a culprit's
    revert needs); or no regression found where there is none. wrong: a named candidate that
    is not a culprit or companion, or a set that misses a culprit without saying so.
    inconclusive: nothing named, or culprits missing only among those it names as undecided
    (found with the others but neither shown needed nor not needed: nothing false is claimed)."""
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


def _named_keys(result: dict, by_id: dict, field: str = "culprits") -> set[str]:
    keys = set()
    for c in result.get(field) or []:
        cand = by_id[c if isinstance(c, str) else c["id"]]
        keys.add(cand.name if cand.kind == "env" else f"{cand.file} {cand.header}")
    return keys


def bisect_launches(n: int) -> int:
    """git bisect over n candidates in diff order with a noise-free oracle, plus its two ends."""
    return 2 + (math.ceil(math.log2(n)) if n > 1 else 0)


def ddmin_launches(n: int, culprits: set[int], together: bool) -> int:
    """Distinct tests of Zeller's ddmin (noise-free) over n changes, plus the two ends.

    The test fails when the culprits are present: all of them (an interacting pair) or any.
    """
    if not culprits:
        return 2
    seen: dict[frozenset, bool] = {}

    def fails(subset: frozenset) -> bool:
        if subset not in seen:
            seen[subset] = culprits <= subset if together else bool(culprits & subset)
        return seen[subset]

    changes, granularity = list(range(n)), 2
    while len(changes) >= 2:
        size = math.ceil(len(changes) / granularity)
        parts = [changes[i : i + size] for i in range(0, len(changes), size)]
        for part in parts:
            if fails(frozenset(part)):
                changes, granularity = part, 2
                break
        else:
            for part in parts:
                rest = [c for c in changes if c not in part]
                if fails(frozenset(rest)):
                    changes, granularity = rest, max(granularity - 1, 2)
                    break
            else:
                if granularity >= len(changes):
                    break
                granularity = min(len(changes), granularity * 2)
    return len(seen) + 2


def _commits_right(result: dict, by_id: dict, want: dict[str, str]) -> bool:
    """Every named culprit hunk is attributed to the commit that brought it."""
    for c in result.get("culprits") or []:
        cand = by_id[c["id"]]
        sha = (c.get("commit") or {}).get("sha")
        if f"{cand.file} {cand.header}" in want and sha != want[f"{cand.file} {cand.header}"]:
            return False
    return True


def _bisect_probes(commits: int, first_bad: int, broken: set[int], low: int = 0) -> int:
    """Launches of a noise-free `git bisect` between `low` (good) and `commits` (bad) whose
    first bad commit is `first_bad`; a probe on a commit that does not start is a launch and a
    `skip` (the next probe is the nearest untried commit to the middle)."""
    launches, tried = 0, set()
    while commits - low > 1:
        middle = (low + commits) // 2
        order = sorted(range(low + 1, commits), key=lambda k: (abs(k - middle), k))
        for k in (k for k in order if k not in tried):
            tried.add(k)
            launches += 1
            if k not in broken:
                low, commits = (low, k) if k >= first_bad else (k, commits)
                break
        else:
            break  # only commits that do not start are left: bisect cannot narrow further
    return launches


def range_baseline(truth: RangeTruth) -> int:
    """Noise-free git bisect to each culprit commit (the second from the first one on), plus
    Zeller's ddmin over each culprit commit's own hunks; the two ends counted once."""
    broken, launches, low = set(truth.broken_positions), 2, 0
    for position in sorted(truth.culprit_positions):
        launches += _bisect_probes(truth.commits, position, broken, low)
        hunks = truth.hunks_in.get(position, 1)
        culprits = set(truth.culprit_hunks_in.get(position, []))
        launches += ddmin_launches(hunks, culprits, truth.together) - 2
        low = position
    return launches


def score_scenario(
    seed: int, noise: float | None, work: Path, ranges: bool = False
) -> ScenarioScore:
    lab = work / f"lab-{seed}"
    create_lab("range" if ranges else "random", lab, seed=seed, noise=noise)
    truth = load_truth(lab)
    cands = list_candidates(lab, load_config(lab))
    by_id = {c.id: c for c in cands.candidates}
    with Session.start(
        lab, "verify 29ms", work / "sessions", lab="range" if ranges else "random", max_launches=40
    ) as session:
        result = session.run_to_end()
    named, wanted = _named_keys(result, by_id), _entry_keys(truth.culprits)
    order = [f"{c.file} {c.header}" if c.kind == "hunk" else c.name for c in cands.candidates]
    positions = {i for i, key in enumerate(order) if key in wanted}
    together = truth.scenario in ("random:pair", "random:helper-pair")  # slow only together
    verdict = outcome(result["status"], named, truth, _named_keys(result, by_id, "undecided"))
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
    )


def run_bench(
    scenarios: int, seed: int, noise: float | None, on_score=None, ranges: bool = False
) -> tuple[list[ScenarioScore], dict]:
    scores = []
    with tempfile.TemporaryDirectory(prefix="debug-agent-bench-") as tmp:
        for i in range(scenarios):
            score = score_scenario(seed + i, noise, Path(tmp), ranges)
            scores.append(score)
            if on_score:
                on_score(score)
    summary = {
        "correct": sum(s.outcome == "correct" for s in scores),
        "wrong": sum(s.outcome == "wrong" for s in scores),
        "inconclusive": sum(s.outcome == "inconclusive" for s in scores),
        "median_launches": statistics.median(s.launches for s in scores),
        "median_bisect_launches": statistics.median(s.bisect_launches for s in scores),
        "median_ddmin_launches": statistics.median(s.ddmin_launches for s in scores),
    }
    if ranges:
        summary["median_range_baseline"] = statistics.median(s.range_baseline or 0 for s in scores)
    return scores, summary
