"""`debug-agent lab bench --stack`: the engine on variants of the stack lab (real PyPI releases,
real timings on this machine), each scored against its truth: the culprit package with its two
versions, its first slow release and the hunk inside it, or "no regression" where nothing slow
moved; beside the launches a bisection over the packages, then the releases, then the release's
hunks would need (noise-free). The wheels are downloaded once for the whole bench; each
environment is built once (the user's environment cache, shared with their investigations)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from agent.bench.baselines import bisect_launches
from agent.bench.lab import ScenarioScore, outcomes, search_launches
from agent.session import Session
from tools.lab.create import create_lab
from tools.lab.stack_lab import BAD, BETWEEN, RELEASE_HUNKS, download
from tools.lab.truth import Truth, load_truth


def stack_baseline(truth: Truth, moved: int) -> int:
    """Bisection over the moved packages (with both ends), then over the culprit's releases
    between its two versions, then over the first slow release's hunks; both ends alone where
    nothing slow moved."""
    if not truth.culprits:
        return 2
    bad = (truth.culprits[0].package or "").split()[-1]
    releases = [*BETWEEN["markdown2"], BAD["markdown2"]]
    after_good = releases.index(bad) + 1  # the releases the first slow one may be
    return (
        bisect_launches(moved)
        + bisect_launches(after_good)
        - 2
        + bisect_launches(RELEASE_HUNKS)
        - 2
    )


def stack_outcome(result: dict, truth: Truth) -> str:
    """correct: the package, its versions, its first slow release and its hunk (and no other
    culprit), or no regression where there is none (the symptom's claim not reproduced);
    wrong: anything false named."""
    status = result["status"]
    if not truth.regression:
        if status in ("no_regression", "not_reproduced"):
            return "correct"
        return "wrong" if status in ("confirmed", "suspected") else "inconclusive"
    if status not in ("confirmed", "suspected"):
        return "inconclusive"
    [culprit] = truth.culprits
    name, good, _, bad = (culprit.package or "").split()
    releases = result.get("releases") or {}
    hunks = result.get("culprits") or []
    right = (
        (releases.get("package"), releases.get("good"), releases.get("bad")) == (name, good, bad)
        and releases.get("first_slow") == culprit.release
        and len(hunks) == 1
        and culprit.marker is not None
        and culprit.marker in hunks[0].get("diff", "")
    )
    return "correct" if right else "wrong"


def score_stack(seed: int, work: Path, wheels: Path) -> ScenarioScore:
    lab = work / f"stack-{seed}"
    info = create_lab("stack", lab, seed=seed, wheels=wheels)
    truth = load_truth(lab)
    with Session.start(
        lab, truth.symptom or "", work / "sessions", lab="stack", max_launches=40
    ) as session:
        result = session.run_to_end()
    named = [
        " ".join(filter(None, (c.get("package"), c.get("file")))) or c["id"]
        for c in result.get("culprits") or []
    ]
    return ScenarioScore(
        seed=seed,
        scenario=truth.scenario,
        candidates=info.changes,
        outcome=stack_outcome(result, truth),
        status=result["status"],
        named=named,
        truth=[c.package or "" for c in truth.culprits],
        companions=[],
        start_failure_rate=0.0,
        launches=result["launches"],
        bisect_launches=stack_baseline(truth, info.changes),
        ddmin_launches=0,
        rounds=result.get("rounds") or result["launches"],
        search_launches=search_launches(Path(result["session_dir"])),
    )


def run_stack_bench(
    scenarios: int, seed: int, on_score: Callable[[ScenarioScore], None] | None = None
) -> tuple[list[ScenarioScore], dict]:
    """Each variant scored, and the summary: outcomes, median launches against the baseline."""
    scores = []
    with tempfile.TemporaryDirectory(prefix="debug-agent-stack-bench-") as tmp:
        work = Path(tmp)
        download(work / "wheels")  # every release any variant pins
        for i in range(scenarios):
            scores.append(score_stack(seed + i, work, work / "wheels"))
            if on_score:
                on_score(scores[-1])
    summary = {
        **outcomes(scores),
        "over_bound": sum(s.launches > s.bisect_launches + 3 for s in scores),
    }
    return scores, summary
