"""The ground truth of a lab, kept outside the lab's folder where no investigation looks."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pydantic import BaseModel, Field

from tools.folders import state_dir
from tools.json_text import model_json, validate_json
from tools.lab.changes import LabError


class TruthEntry(BaseModel):
    file: str | None = None  # hunks: the file
    hunk: str | None = None  # hunks: the `@@ -a,b +c,d @@` header in `git diff HEAD`
    marker: str | None = None  # hunks: a line the hunk adds (or removes)
    env: str | None = None  # env changes: NAME=value
    package: str | None = None  # stack labs: "name good -> bad"
    release: str | None = None  # stack labs: the package's first slow release
    kind: str
    why: str


class RangeTruth(BaseModel):
    """A range lab's history, as a commit-level baseline needs it: its size, where the
    culprits are, which commits do not start."""

    commits: int
    culprit_commits: dict[str, str] = Field(default_factory=dict)  # "file @@..@@" -> sha
    culprit_positions: list[int] = Field(default_factory=list)  # 1-based, in history order
    broken_positions: list[int] = Field(default_factory=list)  # commits that do not start
    hunks_in: dict[int, int] = Field(default_factory=dict)  # culprit position -> its hunks
    culprit_hunks_in: dict[int, list[int]] = Field(default_factory=dict)  # their indexes
    together: bool = False  # the culprit hunks are slow only together


class Truth(BaseModel):
    scenario: str
    seed: int | None = None
    culprits: list[TruthEntry]
    decoys: list[TruthEntry]
    regression: bool  # False for "no regression" controls
    expected: dict[str, float]  # model-time metrics of the good and bad states
    # hunks that are no culprit but must be reverted with one for the server to start (the
    # definition a culprit calls, the deletion of a module a culprit stopped importing): a
    # verdict may name them beside the culprits
    companions: list[TruthEntry] = []
    # the chance that one launch fails at start-up, the same for the same launch name
    start_failure_rate: float = 0.0
    # bad / good - 1 of the verify cycle on a noise-free run, where the scenario plans it
    planned_gap: float | None = None
    range: RangeTruth | None = None  # range labs: the history and its culprit commits
    symptom: str | None = None  # the symptom to investigate (None: "verify 29ms")


def truth_dir() -> Path:
    base = os.environ.get("DEBUG_AGENT_LAB_TRUTH_DIR")
    return Path(base) if base else state_dir() / "lab-truth"


def truth_path(lab_dir: Path) -> Path:
    key = hashlib.sha256(os.fsencode(lab_dir.resolve())).hexdigest()[:20]
    return truth_dir() / f"{key}.json"


def save_truth(lab_dir: Path, truth: Truth) -> Path:
    path = truth_path(lab_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(model_json(truth) + "\n")
    return path


def load_truth(lab_dir: Path) -> Truth:
    path = truth_path(lab_dir)
    if not path.exists():
        raise LabError(f"no lab truth for {lab_dir} (was it made by 'debug-agent lab create'?)")
    return validate_json(Truth, path.read_text())
