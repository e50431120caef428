"""The story's numbers, measured through HTTP as a client would (each within 10 %)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import lab_copy_reverting
from tools.config import load_config
from tools.lab.seed import ALLREDUCE_PER_TOKEN, SEED_CHANGES
from tools.lab.serve import without_speculative
from tools.measure import LaunchPlan, measure
from tools.node.nodes import LocalNode


def _median(lab: Path, metric: str, no_spec: bool = False) -> float:
    config = load_config(lab)
    node = LocalNode(config.python, lab, lab)
    result = measure(
        config,
        node,
        lab,
        lab / ".debug-agent-logs" / "bench.log",
        LaunchPlan(transform_argv=without_speculative if no_spec else None),
    )
    assert len(result.bench.samples) == config.bench.requests
    return result.bench.metrics[metric].median


def test_working_tree_reproduces_the_symptom(seed_lab: Path, tmp_path: Path) -> None:
    lab = lab_copy_reverting(seed_lab, tmp_path, [])
    assert _median(lab, "verify_ms") == pytest.approx(29.0, rel=0.10)
    assert _median(lab, "tok_s") == pytest.approx(60.0, rel=0.10)
    assert _median(lab, "tok_s", no_spec=True) == pytest.approx(82.0, rel=0.10)
    assert _median(lab, "tpot_ms", no_spec=True) == pytest.approx(12.0, rel=0.10)


def test_reverting_only_the_culprit_restores_19ms(seed_lab: Path, tmp_path: Path) -> None:
    lab = lab_copy_reverting(seed_lab, tmp_path, [ALLREDUCE_PER_TOKEN])
    assert _median(lab, "verify_ms") == pytest.approx(19.0, rel=0.10)
    # fixed, speculation pays off again: faster than no speculation
    assert _median(lab, "tok_s") > 82.0


def test_reverting_every_decoy_changes_nothing(seed_lab: Path, tmp_path: Path) -> None:
    decoys = [c for c in SEED_CHANGES if c.role == "decoy"]
    lab = lab_copy_reverting(seed_lab, tmp_path, decoys)
    assert _median(lab, "verify_ms") == pytest.approx(29.0, rel=0.05)
