"""Generated scenarios: 4 to 15 changes drawn from the library, the same for the same seed."""

from __future__ import annotations

import random
from pathlib import Path

from pydantic import BaseModel

from tools.lab import library
from tools.lab.changes import Change, EnvChange, LabError
from tools.lab.flaky_start import FLAKY_RATE, RATE_ENV, flaky_base_changes
from tools.lab.shapes import BASE_SHAPES, SHAPES, is_flaky, later_shape, plan_shape
from tools.lab.target_config import lab_env, write_target_config
from tools.lab.tree import build_repo, hunk_roles
from tools.lab.truth import Truth, TruthEntry

MIN_CHANGES, MAX_CHANGES = 4, 15


class Scenario(BaseModel):
    seed: int
    shape: str
    changes: list[Change]  # hunks, culprits, companions and decoys, in file order
    env: list[EnvChange]  # set by the bad launch, not by the good baseline
    start_failure_rate: float = 0.0  # of every launch, good and bad alike
    planned_gap: float | None = None  # bad / good - 1 of the verify cycle, noise-free
    noise_cv: float | None = None  # the launch noise the shape needs (None: the lab's)
    symptom: str | None = None  # what a user would report, where the seed's does not fit

    @property
    def size(self) -> int:
        return len(self.changes) + len(self.env)


def draw_scenario(seed: int, shape: str | None = None, flaky: bool | None = None) -> Scenario:
    """The scenario of `seed`; `shape` and `flaky` force what the seed would have drawn."""
    if shape is not None and shape not in SHAPES:
        raise LabError(f"unknown scenario shape {shape!r}; choose one of: {', '.join(SHAPES)}")
    rng = random.Random(seed)
    # the base draw always happens: a seed that keeps a base shape keeps its whole stream
    base_shape = rng.choices(list(BASE_SHAPES), weights=list(BASE_SHAPES.values()))[0]
    shape = shape or later_shape(seed) or base_shape
    plan = plan_shape(shape, rng)
    culprits, env = plan.changes, list(plan.env)
    total = rng.randint(MIN_CHANGES, MAX_CHANGES)
    taken = {slot for slot, _ in culprits}
    env_decoys = rng.sample(library.ENV_DECOYS, rng.randint(0, len(library.ENV_DECOYS)))
    env += env_decoys[: max(0, total - len(culprits) - len(env) - 1)]
    free = [(slot, c) for slot, c in sorted(library.DECOYS.items()) if slot not in taken]
    n_decoys = min(len(free), total - len(culprits) - len(env))
    decoys = rng.sample(free, n_decoys)
    changes = sorted([c for _, c in culprits + decoys], key=lambda c: (c.file, c.kind, c.marker))
    flaky = is_flaky(seed) if flaky is None else flaky
    return Scenario(
        seed=seed,
        shape=shape,
        changes=changes,
        env=env,
        start_failure_rate=FLAKY_RATE if flaky else 0.0,
        planned_gap=plan.planned_gap,
        noise_cv=plan.noise_cv,
        symptom=plan.symptom,
    )


def _env_entry(change: EnvChange) -> TruthEntry:
    return TruthEntry(env=f"{change.name}={change.value}", kind=change.kind, why=change.why)


def scenario_env(scenario: Scenario, noise: float | None) -> dict[str, str]:
    """The good launch's env: the lab's, the shape's noise, seeded, flaky where drawn."""
    env = {**lab_env(noise), "SGLANG_LAB_SEED": str(scenario.seed)}  # a scenario replays
    if scenario.noise_cv is not None:  # the shape is its noise: it overrides --noise
        cv = f"{scenario.noise_cv:g}"
        env |= {"SGLANG_LAB_STEP_CV": cv, "SGLANG_LAB_LAUNCH_CV": cv}
    if scenario.start_failure_rate:
        env[RATE_ENV] = f"{scenario.start_failure_rate:g}"
    return env


def build_random(
    dest: Path,
    seed: int,
    noise: float | None,
    shape: str | None = None,
    flaky: bool | None = None,
) -> tuple[Truth, Path, int]:
    scenario = draw_scenario(seed, shape, flaky)
    base = flaky_base_changes() if scenario.start_failure_rate else []
    roles = hunk_roles(build_repo(dest, scenario.changes, base), scenario.changes)
    base_env = scenario_env(scenario, noise)
    bad_env = {**base_env, **{e.name: e.value for e in scenario.env}}
    config = write_target_config(
        dest,
        f"generated lab, seed {seed}",
        bad_env,
        baseline_env=base_env if scenario.env else None,
        symptom=None,
    )
    truth = Truth(
        scenario=f"random:{scenario.shape}",
        seed=seed,
        culprits=roles["culprit"] + [_env_entry(e) for e in scenario.env if e.role == "culprit"],
        decoys=roles["decoy"] + [_env_entry(e) for e in scenario.env if e.role == "decoy"],
        companions=roles["companion"],
        regression=scenario.shape != "control",
        expected={},
        start_failure_rate=scenario.start_failure_rate,
        planned_gap=scenario.planned_gap,
        symptom=scenario.symptom,
    )
    return truth, config, scenario.size
