"""Generated scenarios: 4 to 15 changes drawn from the library, the same for the same seed."""

from __future__ import annotations

import random
from pathlib import Path

from pydantic import BaseModel

from tools.lab import library
from tools.lab.changes import Change, EnvChange
from tools.lab.target_config import lab_env, write_target_config
from tools.lab.tree import build_repo, hunk_truth
from tools.lab.truth import Truth, TruthEntry

# how the regression happens, and how often each shape is drawn
SHAPES = {"single": 35, "pair": 15, "additive": 10, "env": 10, "arg-default": 10, "control": 20}
MIN_CHANGES, MAX_CHANGES = 4, 15


class Scenario(BaseModel):
    seed: int
    shape: str
    changes: list[Change]  # hunks, culprits and decoys, in file order
    env: list[EnvChange]  # set by the bad launch, not by the good baseline

    @property
    def size(self) -> int:
        return len(self.changes) + len(self.env)


def draw_scenario(seed: int) -> Scenario:
    rng = random.Random(seed)
    shape = rng.choices(list(SHAPES), weights=list(SHAPES.values()))[0]
    culprits: list[tuple[str, Change]] = []
    env: list[EnvChange] = []
    if shape == "single":
        culprits = [rng.choice(sorted(library.SINGLE_CULPRITS.items()))]
    elif shape == "pair":
        culprits = list(library.PAIR_CULPRIT)
    elif shape == "additive":
        culprits = list(library.ADDITIVE_CULPRITS)
    elif shape == "arg-default":
        culprits = [library.ARG_DEFAULT_CULPRIT]
    elif shape == "env":
        env = [library.ENV_CULPRIT]
    total = rng.randint(MIN_CHANGES, MAX_CHANGES)
    taken = {slot for slot, _ in culprits}
    env_decoys = rng.sample(library.ENV_DECOYS, rng.randint(0, len(library.ENV_DECOYS)))
    env += env_decoys[: max(0, total - len(culprits) - len(env) - 1)]
    free = [(slot, c) for slot, c in sorted(library.DECOYS.items()) if slot not in taken]
    n_decoys = min(len(free), total - len(culprits) - len(env))
    decoys = rng.sample(free, n_decoys)
    changes = sorted([c for _, c in culprits + decoys], key=lambda c: (c.file, c.kind, c.marker))
    return Scenario(seed=seed, shape=shape, changes=changes, env=env)


def _env_entry(change: EnvChange) -> TruthEntry:
    return TruthEntry(env=f"{change.name}={change.value}", kind=change.kind, why=change.why)


def build_random(dest: Path, seed: int, noise: float | None) -> tuple[Truth, Path, int]:
    scenario = draw_scenario(seed)
    culprits, decoys = hunk_truth(build_repo(dest, scenario.changes), scenario.changes)
    base_env = {**lab_env(noise), "SGLANG_LAB_SEED": str(seed)}  # a scenario replays exactly
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
        culprits=culprits + [_env_entry(e) for e in scenario.env if e.role == "culprit"],
        decoys=decoys + [_env_entry(e) for e in scenario.env if e.role == "decoy"],
        regression=scenario.shape != "control",
        expected={},
    )
    return truth, config, scenario.size
