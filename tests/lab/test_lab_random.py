"""Generated labs: reproducible per seed, every seed launches, and their ground truth is true."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest

from tests.conftest import lab_copy_reverting, run_cli
from tools.config import load_config
from tools.lab.create import create_lab
from tools.lab.flaky_start import RATE_ENV
from tools.lab.random_scenario import MAX_CHANGES, MIN_CHANGES, draw_scenario
from tools.lab.shapes import BASE_SHAPES, SHAPES
from tools.lab.truth import load_truth
from tools.measure import LaunchPlan, measure
from tools.node.nodes import LocalNode
from tools.proc.server import free_port, running_server


def _diff(lab: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(lab), "diff", "HEAD"], capture_output=True, text=True, check=True
    ).stdout


def test_same_seed_same_scenario(tmp_path: Path) -> None:
    for seed in (1, 7):
        a, b = tmp_path / f"a{seed}", tmp_path / f"b{seed}"
        assert run_cli("lab", "create", "random", str(a), "--seed", str(seed)).returncode == 0
        assert run_cli("lab", "create", "random", str(b), "--seed", str(seed)).returncode == 0
        assert _diff(a) == _diff(b) != ""
        assert (a / "debug-agent.toml").read_text() == (b / "debug-agent.toml").read_text()
        assert load_truth(a).model_dump() == load_truth(b).model_dump()
    assert _diff(tmp_path / "a1") != _diff(tmp_path / "a7")


def test_every_shape_and_size_is_drawn() -> None:
    scenarios = [draw_scenario(seed) for seed in range(300)]
    assert {s.shape for s in scenarios} == set(SHAPES)
    sizes = {s.size for s in scenarios}
    assert min(sizes) == MIN_CHANGES and max(sizes) == MAX_CHANGES
    kinds = {c.kind for s in scenarios for c in s.changes}
    for kind in (
        "unexecuted-backend",
        "other-architecture-branch",
        "comment-only",
        "log-message-only",
        "env-not-propagated",
        "perf-neutral-refactor",
        "small-improvement",
        "interacting-pair",
        "additive",
        "server-arg-default",
        "helper-definition",
        "helper-use",
        "deleted-module",
        "deleted-module-importer",
        "small-gap",
        "additive-larger",
        "additive-smaller",
        "worker-env",
    ):
        assert kind in kinds
    assert 0.05 < sum(s.start_failure_rate > 0 for s in scenarios) / len(scenarios) < 0.3


def test_seeds_the_tests_name_keep_their_base_shapes() -> None:
    """Seeds 0-10 (the README's and the tests') draw what they drew before the later shapes:
    the base draw comes first from the seed's own stream, and the salt of the later draw
    leaves them alone."""
    drawn = [draw_scenario(seed) for seed in range(11)]
    assert [s.shape for s in drawn] == [
        "control",
        "single",
        "control",
        "single",
        "single",
        "env",
        "arg-default",
        "single",
        "single",
        "pair",
        "additive",
    ]
    assert not any(s.start_failure_rate for s in drawn)


def _launches(seed: int, lab: Path) -> None:
    info = create_lab("random", lab, seed=seed)
    assert MIN_CHANGES <= info.changes <= MAX_CHANGES
    truth = load_truth(lab)
    assert truth.regression == bool(truth.culprits)
    config = load_config(lab)
    port = free_port()
    steady = {**config.launch.env, RATE_ENV: "0"}  # flaky start-ups are test_lab_shapes' part
    with running_server(
        config.launch_argv(port), lab, steady, port, lab / "server.log", timeout_s=60
    ) as server:
        reply = httpx.post(
            server.base_url + "/generate",
            timeout=30,
            json={"text": "hi", "sampling_params": {"max_new_tokens": 4}},
        ).json()
        assert reply["meta_info"]["completion_tokens"] == 4, seed


def test_sixteen_seeds_all_launch(tmp_path: Path) -> None:
    seeds = range(16)  # every base shape, and a later one, are among them
    assert set(BASE_SHAPES) < {draw_scenario(seed).shape for seed in seeds}
    for seed in seeds:
        _launches(seed, tmp_path / str(seed))


def _first_seed(shape: str) -> int:
    return next(
        seed
        for seed in range(1000)
        if draw_scenario(seed).shape == shape and not draw_scenario(seed).start_failure_rate
    )


def _verify_ms(lab: Path, env: dict[str, str]) -> float:
    config = load_config(lab)
    node = LocalNode(config.python, lab, lab)
    result = measure(config, node, lab, lab / "bench.log", LaunchPlan(env=env))
    return result.bench.metrics["verify_ms"].median


@pytest.mark.parametrize("shape", sorted(BASE_SHAPES))  # the later ones: test_lab_shapes.py
def test_ground_truth_holds_when_measured(shape: str, tmp_path: Path) -> None:
    """Undo everything: good. As is: bad. Undo only the culprits: good again."""
    seed = _first_seed(shape)
    scenario = draw_scenario(seed)
    lab = tmp_path / "lab"
    create_lab("random", lab, seed=seed)
    config = load_config(lab)
    bad_env = config.launch.env
    good_env = config.baseline.env or bad_env
    fixed_env = {
        k: v
        for k, v in bad_env.items()
        if not any(e.name == k and e.role == "culprit" for e in scenario.env)
    }
    culprits = [c for c in scenario.changes if c.role == "culprit"]
    good = _verify_ms(lab_copy_reverting(lab, tmp_path, scenario.changes), good_env)
    bad = _verify_ms(lab, bad_env)
    fixed = _verify_ms(lab_copy_reverting(lab, tmp_path, culprits), fixed_env)
    assert fixed == pytest.approx(good, rel=0.07), (shape, seed, good, bad, fixed)
    if shape == "control":
        assert bad == pytest.approx(good, rel=0.07), (seed, good, bad)
    else:
        assert bad > 1.15 * good, (shape, seed, good, bad)
    if shape == "pair":  # either half alone is harmless
        for half in culprits:
            alone = _verify_ms(lab_copy_reverting(lab, tmp_path, [half]), bad_env)
            assert alone == pytest.approx(good, rel=0.07), (half.file, good, alone)
