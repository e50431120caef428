"""The later scenario shapes: each builds, its truth holds when measured noise-free, the
hunks a culprit needs fail the start-up when reverted alone, and flaky start-ups fail at the
planned rate, the same launches every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.bench.lab import outcome
from tests.conftest import run_cli
from tools.config import load_config
from tools.experiment import ExperimentOptions, ExperimentSpec, run_experiment
from tools.lab.create import create_lab
from tools.lab.flaky_start import FLAKY_RATE, RATE_ENV, START_UP_ERROR, start_up_fails
from tools.lab.random_scenario import draw_scenario
from tools.lab.shapes import LATER_SHAPES
from tools.lab.truth import Truth, TruthEntry, load_truth
from tools.proc.server import ServerError, free_port, running_server
from tools.repo.target import Target

QUIET = {"SGLANG_LAB_STEP_CV": "0", "SGLANG_LAB_LAUNCH_CV": "0", RATE_ENV: "0"}
# shape: (the kind of the hunk that cannot be reverted alone, what the start-up then says)
ALONE_FAILS = {
    "helper-pair": ("helper-definition", "NameError"),
    "helper-use": ("helper-definition", "ImportError"),
    "deleted-module": ("deleted-module-importer", "ModuleNotFoundError"),
}


def _target(lab: Path) -> Target:
    return Target.load(load_config(lab), lab)


def _verify_ms(target: Target, reverted: list[str], out: Path) -> float:
    spec = ExperimentSpec(reverted=reverted, env=QUIET)
    result = run_experiment(target, spec, out, ExperimentOptions(requests=2))
    return result.metric.median


def _hunk_ids(target: Target, entries: list[TruthEntry]) -> dict[str, str]:
    """Candidate id by entry kind; every entry must be a hunk of the diff."""
    ids = {f"{c.file} {c.header}": c.id for c in target.cands.candidates if c.kind == "hunk"}
    return {e.kind: ids[f"{e.file} {e.hunk}"] for e in entries}


@pytest.fixture(scope="module")
def good_ms(tmp_path_factory: pytest.TempPathFactory) -> float:
    """The good state (every shape's is the template's), measured once."""
    lab = tmp_path_factory.mktemp("good") / "lab"
    create_lab("random", lab, seed=3, shape="control")
    target = _target(lab)
    every = [c.id for c in target.cands.candidates]
    return _verify_ms(target, every, lab.parent / "run")


@pytest.mark.parametrize("shape", sorted(LATER_SHAPES))
def test_truth_holds_noise_free(shape: str, good_ms: float, tmp_path: Path) -> None:
    """As is: slower by the planned gap. Culprits and companions undone: good again. The hunk
    that needs another, undone alone: the server exits at start-up."""
    lab = tmp_path / "lab"
    create_lab("random", lab, seed=3, shape=shape, flaky=True)
    truth, target = load_truth(lab), _target(lab)
    assert truth.scenario == f"random:{shape}" and truth.start_failure_rate == FLAKY_RATE
    culprits, companions = _hunk_ids(target, truth.culprits), _hunk_ids(target, truth.companions)
    assert culprits and not set(culprits.values()) & set(companions.values())
    bad = _verify_ms(target, [], tmp_path / "bad")
    fixed = _verify_ms(target, [*culprits.values(), *companions.values()], tmp_path / "fixed")
    assert fixed == pytest.approx(good_ms, rel=0.03), (shape, good_ms, fixed)
    if truth.planned_gap is None:
        assert bad > 1.25 * good_ms, (shape, good_ms, bad)
    else:
        assert bad / good_ms - 1 == pytest.approx(truth.planned_gap, abs=0.03), (shape, bad)
    if shape in ALONE_FAILS:
        kind, error = ALONE_FAILS[shape]
        alone = {**culprits, **companions}[kind]
        with pytest.raises(ServerError, match=error):
            _verify_ms(target, [alone], tmp_path / "alone")
    if shape == "uneven-additive":  # the smaller cause is 15-25 % of the gap
        without_smaller = _verify_ms(target, [culprits["additive-smaller"]], tmp_path / "small")
        assert 0.12 < (bad - without_smaller) / (bad - good_ms) < 0.28, (bad, without_smaller)


def test_small_gaps_come_with_high_noise() -> None:
    for seed in range(20):
        scenario = draw_scenario(seed, shape="small-gap")
        assert scenario.planned_gap is not None and 0.10 <= scenario.planned_gap <= 0.25
        assert scenario.noise_cv is not None and 0.10 <= scenario.noise_cv <= 0.15
        share = draw_scenario(seed, shape="uneven-additive")
        assert [c.kind for c in share.changes if c.role == "culprit"].count("additive-smaller") == 1


def test_flaky_start_ups_fail_at_the_planned_rate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The rate over many launch names, the same twice; real launches fail exactly where the
    draw says, with the error line, before the server is ready."""
    monkeypatch.setenv(RATE_ENV, str(FLAKY_RATE))
    monkeypatch.setenv("SGLANG_LAB_SEED", "5")
    draws = []
    for _ in range(2):
        fails = []
        for i in range(1000):
            monkeypatch.setenv("DEBUG_AGENT_LAUNCH", f"calibrate-{i}")
            fails.append(start_up_fails())
        draws.append(fails)
    assert draws[0] == draws[1]
    assert 0.17 < sum(draws[0]) / 1000 < 0.23
    lab = tmp_path / "lab"
    create_lab("random", lab, seed=5, shape="single", flaky=True)
    config = load_config(lab)
    names = [f"calibrate-{i}" for i in range(1000)]
    failing = [n for n, f in zip(names, draws[0], strict=True) if f][:2]
    starting = [n for n, f in zip(names, draws[0], strict=True) if not f][:1]
    for name in failing + starting:
        env = {**config.launch.env, "DEBUG_AGENT_LAUNCH": name}
        port = free_port()
        launch = running_server(config.launch_argv(port), lab, env, port, tmp_path / f"{name}.log")
        if name in failing:
            with pytest.raises(ServerError, match="exited"), launch:
                pass
            assert START_UP_ERROR in (tmp_path / f"{name}.log").read_text()
        else:
            with launch as server:
                assert server.ready_s > 0


def _entry(kind: str, hunk: str) -> TruthEntry:
    return TruthEntry(file="a.py", hunk=hunk, kind=kind, why="")


def test_scoring_accepts_companions_beside_the_culprits() -> None:
    use, definition, decoy = "a.py @@ -1 +1 @@", "a.py @@ -9 +9 @@", "a.py @@ -20 +20 @@"
    truth = Truth(
        scenario="random:helper-use",
        culprits=[_entry("helper-use", "@@ -1 +1 @@")],
        companions=[_entry("helper-definition", "@@ -9 +9 @@")],
        decoys=[_entry("comment-only", "@@ -20 +20 @@")],
        regression=True,
        expected={},
    )
    assert outcome("confirmed", {use}, truth) == "correct"
    assert outcome("suspected", {use, definition}, truth) == "correct"
    assert outcome("confirmed", {definition}, truth) == "wrong"
    assert outcome("confirmed", {use, decoy}, truth) == "wrong"
    assert outcome("error", set(), truth) == "inconclusive"
    # helper-pair: the definition is a culprit too, so the use alone is not the answer
    pair = truth.model_copy(
        update={"culprits": truth.culprits + truth.companions, "companions": []}
    )
    assert outcome("confirmed", {use}, pair) == "wrong"
    assert outcome("confirmed", {use, definition}, pair) == "correct"


def test_lab_create_by_scenario_name(tmp_path: Path) -> None:
    done = run_cli("lab", "create", "--scenario", "deleted-module", str(tmp_path / "lab"))
    assert done.returncode == 0, done.stderr
    truth = load_truth(tmp_path / "lab")
    assert truth.scenario == "random:deleted-module" and truth.seed == 1
    assert [e.kind for e in truth.companions] == ["deleted-module"]
    bad = run_cli("lab", "create", "--scenario", "nope", str(tmp_path / "other"))
    assert bad.returncode != 0 and "unknown scenario shape 'nope'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_missing_culprit_named_as_undecided_is_inconclusive_not_correct() -> None:
    truth = Truth(
        scenario="random:uneven-additive",
        seed=1,
        culprits=[
            TruthEntry(file="a.py", hunk="@@ -1 +1 @@", kind="hunk", why="slow"),
            TruthEntry(file="b.py", hunk="@@ -2 +2 @@", kind="hunk", why="slower"),
        ],
        decoys=[],
        regression=True,
        expected={},
    )
    big, small = "a.py @@ -1 +1 @@", "b.py @@ -2 +2 @@"
    assert outcome("suspected", {big}, truth, {small}) == "inconclusive"
    assert outcome("confirmed", {big}, truth) == "wrong"
    assert outcome("suspected", {big, small}, truth) == "correct"
