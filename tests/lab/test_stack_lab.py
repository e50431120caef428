"""The stack lab on real PyPI releases (downloaded when the lab is made): the culprit package
with its two versions, its first slow release and the hunk inside it, the never-imported
upgrades dropped with no launch, the pydantic pair moved together, within the launches a
bisection over the packages, the releases and the release's hunks would need, plus three."""

from __future__ import annotations

import json
import math
from pathlib import Path

from agent.bench.stack import stack_baseline, stack_outcome
from tests.conftest import run_cli
from tools.lab.truth import load_truth


def test_the_stack_lab_names_the_package_and_its_first_slow_release(tmp_path: Path) -> None:
    lab = tmp_path / "stack"
    made = run_cli("lab", "create", "stack", str(lab))
    assert made.returncode == 0, made.stderr
    truth = json.loads(run_cli("lab", "truth", str(lab)).stdout)
    [culprit] = truth["culprits"]
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = run_cli("investigate", "--symptom", "latency_ms 75 (was 10)", "--json", cwd=lab, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)

    assert result["status"] == "confirmed", result["notes"]
    name, good, _, bad = culprit["package"].split()
    releases = result["releases"]
    assert (releases["package"], releases["good"], releases["bad"]) == (name, good, bad)
    assert releases["first_slow"] == culprit["release"] == "2.5.1"
    # inside the first slow release, the hunk that wrote the regex, and no other
    [hunk] = result["culprits"]
    assert hunk["package"] == f"{name} {good} -> {culprit['release']}", hunk
    assert hunk["file"] == culprit["file"] and culprit["marker"] in hunk["diff"], hunk["diff"]
    assert {d["candidate"] for d in result["dropped"]} == {"pkg-six", "pkg-idna"}
    assert not any(u["config"].startswith("bad - {pkg-pydantic") for u in result["unresolved"])
    # the packages (6 moved: 2 ends and 3 probes), the 2 releases between (2 probes), the
    # first slow release's 17 hunks (5 probes), + 3; and two replicates a loaded machine's
    # noise may ask for (the suite runs beside itself)
    bound = (2 + math.ceil(math.log2(6))) + math.ceil(math.log2(3)) + math.ceil(math.log2(17)) + 3
    assert result["launches"] <= bound + 2, result["launches"]
    # `lab bench --stack` scores this lab's variants so: right, within the same bound
    truth_model = load_truth(lab)
    assert stack_outcome(result, truth_model) == "correct"
    assert stack_baseline(truth_model, len(truth["culprits"] + truth["decoys"])) + 3 == bound
