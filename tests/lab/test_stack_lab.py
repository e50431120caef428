"""The stack lab on real PyPI releases (downloaded when the lab is made): the culprit package
with its two versions and its first slow release, the never-imported upgrades dropped with no
launch, the pydantic pair moved together, within the launches a bisection over the packages and
over the releases would need, plus three."""

from __future__ import annotations

import json
import math
from pathlib import Path

from tests.conftest import run_cli


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
    assert [c["id"] for c in result["culprits"]] == ["pkg-markdown2"]
    name, good, _, bad = culprit["package"].split()
    releases = result["releases"]
    assert (releases["package"], releases["good"], releases["bad"]) == (name, good, bad)
    assert releases["first_slow"] == culprit["marker"] == "2.5.1"
    assert {d["candidate"] for d in result["dropped"]} == {"pkg-six", "pkg-idna"}
    assert not result["unresolved"]  # the pydantic pair never moved apart
    # the packages (6 moved: 2 ends and 3 probes), the 2 releases between (2 probes), + 3; and
    # two replicates a loaded machine's noise may ask for (the suite runs beside itself)
    bound = (2 + math.ceil(math.log2(6))) + math.ceil(math.log2(3)) + 3
    assert result["launches"] <= bound + 2, result["launches"]
