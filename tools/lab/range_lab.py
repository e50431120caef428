"""`lab create range`: an upgrade's history over the lab tree, the same for the same seed.

The good release is tagged `v0.5.23`; K commits follow on `main`, the last one is the bad
state (a clean working tree). One or two culprit commits hold their culprit hunks beside
unrelated ones; the other commits are refactors (helpers appended to modules, executed or
never imported) and library decoys; some commits do not start (a module that fails at import,
fixed by the next commit), as real ranges have. The truth names each culprit hunk's commit.
"""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

import git
from pydantic import BaseModel, Field

from tools.lab import library
from tools.lab.changes import Change
from tools.lab.shapes import plan_shape
from tools.lab.target_config import lab_env, write_target_config
from tools.lab.tree import LAB_ACTOR, LAB_DATE, TEMPLATE, commit_good, copy_template, locate_hunks
from tools.lab.truth import RangeTruth, Truth, TruthEntry

GOOD_TAG = "v0.5.23"
DEFAULT_COMMITS = 30
SHAPES = {"single": 50, "additive": 15, "pair": 15, "helper-use": 10, "control": 10}
SRT = "python/sglang/srt"
EXECUTED = [
    f"{SRT}/model_executor/model_runner.py",
    f"{SRT}/managers/scheduler.py",
    f"{SRT}/server_args.py",
    f"{SRT}/speculative/eagle_worker.py",
    f"{SRT}/entrypoints/engine.py",
    f"{SRT}/models/deepseek_v2.py",
]
NEVER_IMPORTED = [
    f"{SRT}/layers/attention/flashinfer_backend.py",
    f"{SRT}/layers/attention/trtllm_mla_backend.py",
    f"{SRT}/models/glm4_moe.py",
    f"{SRT}/models/llama.py",
]
BROKEN = f"{SRT}/server_args.py"
BROKEN_TEXT = "\n_LAB_SETTING = _lab_setting_not_defined_yet  # NameError at import\n"


class _Commit(BaseModel):
    subject: str
    changes: list[Change] = Field(default_factory=list)
    appends: list[tuple[str, str]] = Field(default_factory=list)  # (file, text at its end)
    unappend: str | None = None  # the broken text the previous commit appended


def _refactor(rng: random.Random, n: int) -> tuple[str, str]:
    file = rng.choice(EXECUTED if rng.random() < 0.6 else NEVER_IMPORTED)
    text = (
        f"\n\ndef _lab_helper_{n}(values: list[float]) -> float:\n"
        f'    """Refactor {n}: the mean of `values` (0.0 when empty); no caller yet."""\n'
        "    return sum(values) / len(values) if values else 0.0\n"
    )
    return file, text


def _plan(rng: random.Random, k: int) -> tuple[str, list[_Commit], dict[int, list[Change]]]:
    shape = rng.choices(list(SHAPES), weights=list(SHAPES.values()))[0]
    culprits = [c for _, c in plan_shape(shape, rng).changes] if shape != "control" else []
    commits = [_Commit(subject="") for _ in range(k)]
    spots = rng.sample(range(k - 1), 2)  # never the last: the bad state is a fix's parent too
    placed: dict[int, list[Change]] = {}
    if shape == "additive":
        placed = {spots[0]: [culprits[0]], spots[1]: [culprits[1]]}
    elif shape == "helper-use":  # the helper comes first, in a commit of its own or the same
        placed = {min(spots): [culprits[0]]}
        placed.setdefault(max(spots) if rng.random() < 0.5 else min(spots), []).append(culprits[1])
    elif culprits:
        placed = {spots[0]: culprits}
    taken = {c.file for cs in placed.values() for c in cs}
    decoys = [c for _, c in sorted(library.DECOYS.items()) if c.file not in taken]
    free = [i for i in range(k) if i not in placed]
    broken = sorted(rng.sample([i for i in free if i + 1 < k], min(3, len(free) // 6)))
    for i in broken:
        commits[i].appends.append((BROKEN, BROKEN_TEXT))
        commits[i + 1].unappend = BROKEN_TEXT
    for change in rng.sample(decoys, min(len(decoys), k // 3)):
        commits[rng.randrange(k)].changes.append(change)
    for i, changes in placed.items():
        commits[i].changes = changes + commits[i].changes  # beside unrelated hunks
    for n, commit in enumerate(commits):
        if not commit.changes or n in placed or rng.random() < 0.5:
            commit.appends.append(_refactor(rng, n))
        commit.subject = _subject(rng, commit, n)
    return shape, commits, placed


VERBS = ("tidy up", "refactor", "simplify", "update", "clean up", "small fixes", "tune")


def _subject(rng: random.Random, commit: _Commit, n: int) -> str:
    """Neutral words, as most real subjects are (a subject that says "slower" is rare)."""
    if (BROKEN, BROKEN_TEXT) in commit.appends:
        what, where = "read the new setting", Path(BROKEN).stem
    elif commit.unappend is not None:
        what, where = "fix the new setting's import", Path(BROKEN).stem
    else:
        what = rng.choice(VERBS)
        where = Path(commit.changes[0].file if commit.changes else commit.appends[0][0]).stem
    return f"{where}: {what} (#{4000 + n * 7 + rng.randint(0, 6)})"


def _write(dest: Path, commit: _Commit) -> None:
    if commit.unappend is not None:
        path = dest / BROKEN
        path.write_text(path.read_text().replace(commit.unappend, "", 1))
    for change in commit.changes:
        change.apply(dest)
    for file, text in commit.appends:
        path = dest / file
        path.write_text(path.read_text() + text)


def build_range(
    dest: Path, seed: int, noise: float | None, commits: int = DEFAULT_COMMITS
) -> tuple[Truth, Path, int]:
    rng = random.Random(f"range:{seed}")
    shape, plan, placed = _plan(rng, commits)
    copy_template(dest, TEMPLATE)
    repo = commit_good(dest, f"sglang {GOOD_TAG} (lab): known-good release")
    repo.create_tag(GOOD_TAG)
    shas = []
    for n, commit in enumerate(plan):
        _write(dest, commit)
        repo.git.add(A=True)
        when = LAB_DATE.replace(hour=0) + timedelta(days=1, hours=n)  # an hour apart
        shas.append(
            repo.index.commit(
                commit.subject,
                author=LAB_ACTOR,
                committer=LAB_ACTOR,
                author_date=when,
                commit_date=when,
            ).hexsha
        )
    culprits = [c for i in sorted(placed) for c in placed[i]]
    decoys = [c for commit in plan for c in commit.changes if c.role == "decoy"]
    located = locate_hunks(repo, culprits + decoys, ref=GOOD_TAG)
    entries = {c.marker: e for c, e in zip(culprits, located, strict=False)}
    env = {**lab_env(noise), "SGLANG_LAB_SEED": str(seed)}
    config = write_target_config(dest, f"range lab, seed {seed}", env, good=GOOD_TAG)
    truth = Truth(
        scenario=f"range:{shape}",
        seed=seed,
        culprits=[e for c, e in zip(culprits, located, strict=False) if c.role == "culprit"],
        decoys=located[len(culprits) :],
        companions=[e for c, e in zip(culprits, located, strict=False) if c.role == "companion"],
        regression=bool(culprits),
        expected={},
        range=_range_truth(repo, plan, placed, shas, entries, together=shape == "pair"),
    )
    return truth, config, len(culprits)


def _range_truth(
    repo: git.Repo,
    plan: list[_Commit],
    placed: dict[int, list[Change]],
    shas: list[str],
    entries: dict[str, TruthEntry],
    together: bool,
) -> RangeTruth:
    from unidiff import PatchSet

    truth = RangeTruth(
        commits=len(plan),
        broken_positions=[i + 1 for i, c in enumerate(plan) if (BROKEN, BROKEN_TEXT) in c.appends],
        together=together,
    )
    for i, changes in sorted(placed.items()):
        culprit_changes = [c for c in changes if c.role == "culprit"]
        if not culprit_changes:
            continue
        position = i + 1
        truth.culprit_positions.append(position)
        parent = shas[i - 1] if i else GOOD_TAG
        hunks = [
            h for f in PatchSet(repo.git.diff(parent, shas[i], "-U3", "--no-renames")) for h in f
        ]
        truth.hunks_in[position] = len(hunks)
        markers = {c.marker for c in culprit_changes}
        truth.culprit_hunks_in[position] = [
            n
            for n, hunk in enumerate(hunks)
            if any(line.value.rstrip("\n") in markers for line in hunk if line.is_added)
        ]
        for change in culprit_changes:
            entry = entries[change.marker]
            truth.culprit_commits[f"{entry.file} {entry.hunk}"] = shas[i]
    return truth
