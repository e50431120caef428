"""The shapes a generated scenario can take: how its regression happens, and how often each is
drawn.

The base shapes keep their weights and their draw from the scenario's own random stream, so a
seed that draws a base shape builds the same scenario it always did. The later shapes are drawn
first from a stream of their own (at their share of the whole table); where that draw picks
none, the base draw stands.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tools.lab import dependent, knobs, library
from tools.lab.changes import Change, EnvChange

BASE_SHAPES = {
    "single": 35,
    "pair": 15,
    "additive": 10,
    "env": 10,
    "arg-default": 10,
    "control": 20,
}
LATER_SHAPES = {
    "helper-pair": 5,
    "helper-use": 5,
    "deleted-module": 5,
    "small-gap": 6,
    "uneven-additive": 6,
    "worker-env": 5,
}
# drawn before the others, from a stream of its own, so that every older draw stands
ACCEPTANCE_SHARE = 0.06
SHAPES = {**BASE_SHAPES, **LATER_SHAPES, "acceptance": 6}
_DRAWN_TOTAL = sum(BASE_SHAPES.values()) + sum(LATER_SHAPES.values())
# seeds the later-shape and flaky draws; "shapes-28" is the first of shapes-2, shapes-3, ...
# under which seeds 0-10 (the ones tests and docs name) keep the shapes they always had and
# steady start-ups (test_lab_random checks it)
SALT = "shapes-28"
ACCEPTANCE_SALT = "acceptance-2"  # under which seeds 0-10 keep their shapes too
FLAKY_SHARE = 0.15  # scenarios whose launches sometimes fail at start-up


ACCEPTANCE_SYMPTOM = "60 tok/s (was 82)"


@dataclass
class ShapePlan:
    """What a shape puts into a scenario besides the decoys."""

    changes: list[tuple[str, Change]]  # (slot, change): culprits and their companions
    env: list[EnvChange] = field(default_factory=list)
    planned_gap: float | None = None  # bad / good - 1 of the verify cycle, noise-free
    noise_cv: float | None = None  # the launch noise the shape needs (None: the lab's)
    symptom: str | None = None  # what a user would report (None: the seed's "verify 29ms")


def later_shape(seed: int) -> str | None:
    """The later shape this seed draws, or None where the base draw stands."""
    if random.Random(f"{ACCEPTANCE_SALT}:{seed}").random() < ACCEPTANCE_SHARE:
        return "acceptance"
    point = random.Random(f"{SALT}:{seed}:shape").random() * _DRAWN_TOTAL
    for name, weight in LATER_SHAPES.items():
        if point < weight:
            return name
        point -= weight
    return None


def is_flaky(seed: int) -> bool:
    return random.Random(f"{SALT}:{seed}:flaky").random() < FLAKY_SHARE


def plan_shape(shape: str, rng: random.Random) -> ShapePlan:
    if shape in BASE_SHAPES:
        return _base_plan(shape, rng)
    if shape == "helper-pair":
        pair = dependent.helper_pair()
        return ShapePlan([("ar_core", pair[0]), ("ar_helper", pair[1])])
    if shape == "helper-use":
        definition, use = dependent.helper_dependency()
        return ShapePlan([("utils", definition), ("eager", use)], planned_gap=_gap(0.18))
    if shape == "deleted-module":
        deletion, importer = dependent.deleted_module()
        return ShapePlan([("triton", deletion), ("registry", importer)])
    if shape == "worker-env":
        return ShapePlan([library.WORKER_ENV_CULPRIT])
    if shape == "acceptance":
        return ShapePlan([library.ACCEPTANCE_CULPRIT], symptom=ACCEPTANCE_SYMPTOM)
    if shape == "small-gap":
        gap = round(rng.uniform(0.10, 0.25), 2)
        slot = rng.choice(knobs.KNOB_SLOTS)
        change = knobs.knob(slot, gap * knobs.GOOD_VERIFY_MS, "small-gap")
        noise = round(rng.uniform(0.10, 0.15), 2)
        return ShapePlan([(slot, change)], planned_gap=gap, noise_cv=noise)
    if shape == "uneven-additive":
        gap, share = round(rng.uniform(0.4, 0.6), 2), round(rng.uniform(0.15, 0.25), 2)
        big, small = rng.sample(knobs.KNOB_SLOTS, 2)
        total_ms = gap * knobs.GOOD_VERIFY_MS
        return ShapePlan(
            [
                (big, knobs.knob(big, (1 - share) * total_ms, "additive-larger")),
                (small, knobs.knob(small, share * total_ms, "additive-smaller")),
            ],
            planned_gap=gap,
        )
    raise ValueError(f"unknown scenario shape {shape!r}")


def _gap(eager_ms_per_layer: float) -> float:
    """The planned gap of an eager launch cost raised to `eager_ms_per_layer`."""
    extra = (eager_ms_per_layer - knobs.EAGER_MS_PER_LAYER) * knobs.LAYERS_PER_CYCLE
    return round(extra / knobs.GOOD_VERIFY_MS, 2)


def _base_plan(shape: str, rng: random.Random) -> ShapePlan:
    """The base shapes, drawing from `rng` exactly as they always did."""
    if shape == "single":
        return ShapePlan([rng.choice(sorted(library.SINGLE_CULPRITS.items()))])
    if shape == "pair":
        return ShapePlan(list(library.PAIR_CULPRIT))
    if shape == "additive":
        return ShapePlan(list(library.ADDITIVE_CULPRITS))
    if shape == "arg-default":
        return ShapePlan([library.ARG_DEFAULT_CULPRIT])
    if shape == "env":
        return ShapePlan([], env=[library.ENV_CULPRIT])
    return ShapePlan([])  # control
