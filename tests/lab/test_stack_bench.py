"""`lab bench --stack` on a variant of the stack lab (real PyPI releases, real timings): a
control where only harmless packages moved is scored correct: the symptom's 75 ms is not
reproduced, and nothing is named. The culprit's
variants are scored by the same functions the stack lab's own test applies to its result
(tests/lab/test_stack_lab.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import assert_one_line_error, run_cli


def test_the_stack_bench_scores_a_control(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = run_cli("lab", "bench", "--stack", "--seed", "4", "--scenarios", "1", "--json", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    bench = json.loads(done.stdout)
    [control] = bench["scenarios"]
    assert control["scenario"] == "stack:5-moved" and control["truth"] == [], control
    assert (control["status"], control["outcome"]) == ("not_reproduced", "correct"), control
    assert control["named"] == []
    assert control["bisect_launches"] == 2, control
    assert (bench["summary"]["correct"], bench["summary"]["wrong"]) == (1, 0)


def test_the_stack_bench_takes_real_timings_only() -> None:
    done = run_cli("lab", "bench", "--stack", "--noise", "0.05")
    assert_one_line_error(done, "--stack", "no --ranges, --slots or --noise")
