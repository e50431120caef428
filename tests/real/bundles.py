"""Real regressions over their projects' real git histories, kept as small git bundles.

Each case is a folder of tests/data/real-bundles: `case.json` (the project, the good and bad
tags, the culprit commit as its advisory or fix names it, a text its culprit hunk holds),
`bench.py` (`python bench.py TREE` prints `latency_ms: <value>` three times for the case's
pathological input, importing the package from TREE) and `<name>.bundle` (the range and its
tags: `git clone` needs no network). `investigate` runs debug-agent on the bad tag with
`--good` the good tag; `bisect_run` runs a real `git bisect run` over the same range with the
same bench and a threshold at the ends' geometric mean, counting its launches.

    python -m tests.real.bundles CASE FOLDER   # both, one JSON object (docs/real-runs.md)
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from pydantic import BaseModel

from tests.conftest import sh

DATA = Path(__file__).resolve().parents[1] / "data" / "real-bundles"


class Case(BaseModel):
    name: str
    project: str
    good_tag: str
    bad_tag: str
    culprit_sha: str
    culprit_subject: str
    culprit_text: str  # a line the culprit hunk adds or removes
    sources: list[str]
    shapes: list[str]
    symptom: str  # "latency_ms 400 (was 0.5)"
    # `git bisect run`'s launches with the case's bench (its two ends included), as
    # `bisect_run` counts them: the same on every run, measured with
    # `python -m tests.real.bundles CASE FOLDER` (docs/real-runs.md)
    git_bisect_launches: int
    transcript_says: list[str] = []  # what its transcript must say (its shape's evidence)

    @property
    def folder(self) -> Path:
        return DATA / self.name


def cases() -> list[Case]:
    return [
        Case.model_validate_json((folder / "case.json").read_text())
        for folder in sorted(DATA.iterdir())
        if (folder / "case.json").exists()
    ]


def checkout(case: Case, folder: Path) -> Path:
    """The case's history cloned from its bundle, the bad tag checked out on a branch, and
    its debug-agent.toml (untracked: debug-agent's own file) beside it."""
    repo = folder / case.name
    bundle = case.folder / f"{case.name}.bundle"
    sh(folder, "git", "clone", "-q", "--no-checkout", str(bundle), str(repo))
    sh(repo, "git", "checkout", "-q", "-B", "investigate", case.bad_tag)
    (repo / "debug-agent.toml").write_text(
        textwrap.dedent(f"""\
            [target]
            repo = "."
            good = "{case.good_tag}"
            [bench]
            kind = "command"
            command = "{{python}} {case.folder / "bench.py"} {{worktree}}"
            metric = "latency_ms"
            unit = "ms"
            metric_regex = "latency_ms: ([0-9.]+)"
            timeout_s = 120
            # a loaded machine only ever slows a run down: a launch is its fastest run
            per_launch = "best"
            [budget]
            max_launches = 30
            """)
    )
    return repo


def investigate(case: Case, repo: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "agent", "investigate", "--good", case.good_tag, "--json"]
        + ["--symptom", case.symptom],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return json.loads(done.stdout)


def bench_ms(case: Case, tree: Path) -> float | None:
    """The fastest of the bench's values on `tree`; None when the tree does not run."""
    done = subprocess.run(
        [sys.executable, str(case.folder / "bench.py"), str(tree)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    values = [float(line.split()[-1]) for line in done.stdout.splitlines() if "latency_ms:" in line]
    return min(values) if done.returncode == 0 and values else None


CHECK = """\
import json, subprocess, sys
case, bench, threshold, log = sys.argv[1:]
tree = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True)
done = subprocess.run([sys.executable, bench, tree.stdout.strip()], capture_output=True, text=True)
values = [float(l.split()[-1]) for l in done.stdout.splitlines() if "latency_ms:" in l]
sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
with open(log, "a") as f:
    f.write(json.dumps({"sha": sha, "ms": min(values) if values else None}) + "\\n")
sys.exit(125 if done.returncode or not values else int(min(values) >= float(threshold)))
"""


def bisect_run(case: Case, repo: Path) -> dict:
    """`git bisect run` between the case's tags with its bench (the ends measured first, the
    threshold at their geometric mean); launches: the ends and every commit it tested."""
    started = time.monotonic()
    ends = {}
    for end in (case.good_tag, case.bad_tag):
        sh(repo, "git", "checkout", "-q", end)
        ends[end] = bench_ms(case, repo)
    good, bad = ends[case.good_tag], ends[case.bad_tag]
    assert good is not None and bad is not None, ends
    log, script = repo.parent / f"{case.name}-bisect.jsonl", repo.parent / "check.py"
    log.unlink(missing_ok=True)
    script.write_text(CHECK)
    sh(repo, "git", "bisect", "start", case.bad_tag, case.good_tag)
    threshold = math.sqrt(good * bad)
    command = [sys.executable, str(script), case.name, str(case.folder / "bench.py")]
    run = subprocess.run(
        ["git", "bisect", "run", *command, f"{threshold:.6f}", str(log)],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    first = next(
        (line.split()[0] for line in run.stdout.splitlines() if "is the first bad commit" in line),
        None,
    )
    sh(repo, "git", "bisect", "reset")
    sh(repo, "git", "checkout", "-q", "investigate")
    steps = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return {
        "first_bad": first,
        "ends_ms": ends,
        "tested": len(steps),
        "launches": len(steps) + 2,  # with its two ends, as debug-agent counts its own
        "wall_s": round(time.monotonic() - started, 1),
    }


def main(argv: list[str]) -> int:
    [name, folder] = argv
    case = next(c for c in cases() if c.name == name)
    Path(folder).mkdir(parents=True, exist_ok=True)
    repo = checkout(case, Path(folder))
    started = time.monotonic()
    result = investigate(case, repo)
    wall = round(time.monotonic() - started, 1)
    bisect = bisect_run(case, repo)
    print(
        json.dumps(
            {
                "case": case.name,
                "status": result["status"],
                "launches": result["launches"],
                "wall_s": wall,
                "first_bad": (result.get("bisection") or {}).get("first_bad"),
                "culprits": [(c["id"], c["file"]) for c in result["culprits"]],
                "git_bisect": bisect,
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
