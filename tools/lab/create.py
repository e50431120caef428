"""`debug-agent lab create KIND DIR`: build a lab and store its ground truth outside it."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from tools.lab.changes import LabError
from tools.lab.seed import SEED_CHANGES, SEED_EXPECTED
from tools.lab.shapes import SHAPES
from tools.lab.target_config import lab_env, write_target_config
from tools.lab.tree import build_repo, hunk_truth, prepare_dir
from tools.lab.truth import Truth, save_truth, truth_path

KINDS = ("seed", "random", "range", "transformers", "tp", "stack", "vllm")
# temporary folders that hold a lab built for one run (investigate, replay --rerun)
TEMP_PREFIXES = ("debug-agent-seed-lab-", "debug-agent-rerun-")


class LabInfo(BaseModel):
    kind: str
    path: str
    config: str
    truth: str
    changes: int


def create_lab(
    kind: str,
    dest: Path,
    seed: int | None = None,
    noise: float | None = None,
    shape: str | None = None,
    flaky: bool | None = None,
    commits: int | None = None,
    wheels: Path | None = None,
) -> LabInfo:
    """Build a lab of `kind` in `dest`; a random lab of a forced `shape` (and flakiness) where
    asked, with seed 1 unless one is given; a stack lab with its wheels copied from `wheels`
    where given (else downloaded)."""
    if kind not in KINDS:
        raise LabError(f"unknown lab kind {kind!r}; choose one of: {', '.join(KINDS)}")
    if noise is not None and not 0.0 <= noise <= 0.5:
        raise LabError(f"--noise {noise} is outside [0, 0.5]")
    if flaky is not None and kind != "random":
        raise LabError("--flaky-start is for random labs")
    if shape is not None and kind not in ("random", "transformers"):
        raise LabError("--scenario is for random and transformers labs")
    if shape is not None and kind == "random" and shape not in SHAPES:
        raise LabError(f"unknown scenario shape {shape!r}; choose one of: {', '.join(SHAPES)}")
    if shape is not None and kind == "random" and seed is None:
        seed = 1
    if kind in ("random", "range") and seed is None:
        raise LabError(f"'lab create {kind}' needs --seed N")
    if commits is not None and (kind != "range" or not 2 <= commits <= 500):
        raise LabError("--commits is for range labs, from 2 to 500")
    prepare_dir(dest)
    if kind == "seed":
        culprits, decoys = hunk_truth(build_repo(dest, SEED_CHANGES), SEED_CHANGES)
        config = write_target_config(
            dest, "the seed lab (EAGLE-3 verify 19 ms -> 29 ms)", lab_env(noise)
        )
        truth = Truth(
            scenario="seed",
            culprits=culprits,
            decoys=decoys,
            regression=True,
            expected=SEED_EXPECTED,
        )
        n_changes = len(SEED_CHANGES)
    elif kind == "range":
        from tools.lab.range_lab import DEFAULT_COMMITS, build_range

        truth, config, n_changes = build_range(dest, seed or 0, noise, commits or DEFAULT_COMMITS)
    elif kind == "stack":
        from tools.lab.stack_lab import build_stack_lab

        truth, config, n_changes = build_stack_lab(dest, seed, wheels)
    elif kind == "vllm":
        from tools.lab.vllm_lab import build_vllm_lab

        truth, config, n_changes = build_vllm_lab(dest)
    elif kind == "tp":
        from tools.lab.tp_lab import build_tp_lab

        truth, config, n_changes = build_tp_lab(dest)
    elif kind == "transformers":
        from tools.lab.transformers_lab import build_transformers_lab

        truth, config, n_changes = build_transformers_lab(dest, shape or "verify")
    else:
        from tools.lab.random_scenario import build_random

        if seed is None:  # refused above, before the folder was prepared
            raise LabError("'lab create random' needs --seed N")
        truth, config, n_changes = build_random(dest, seed, noise, shape, flaky)
    truth_file = save_truth(dest, truth)
    return LabInfo(
        kind=kind, path=str(dest), config=str(config), truth=str(truth_file), changes=n_changes
    )


def remove_lab(lab: Path) -> None:
    """A lab built for one run, removed with its truth (and the temporary folder around it)."""
    import shutil

    truth_path(lab).unlink(missing_ok=True)
    parent = lab.parent
    shutil.rmtree(lab, ignore_errors=True)
    if parent.name.startswith(TEMP_PREFIXES) and not any(parent.iterdir()):
        parent.rmdir()
