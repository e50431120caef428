"""git bisect over the same releases, for the comparison in docs/real-runs.md.

    python -m tests.real.bisect_releases CASE FOLDER V1 V2 ... VN

builds FOLDER/CASE with one commit per release (tags vV1 ... vVN, VN committed too), measures
both ends with the case's bench (tests/real/bench.py), then runs `git bisect run` with a check
that calls a release slow above the geometric mean of the two ends. It prints one JSON object:
the first slow release, git bisect's launches between the ends, and every value measured.
`check` is that threshold script (git bisect runs it in the repository)."""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import sh
from tests.real.regressions import BENCH, REGRESSIONS, build_target, dependencies
from tests.real.releases import DownloadError


def bench_ms(case: str, tree: Path, extra: Path | None) -> float:
    """The median of one bench run's values, the package imported from `tree`."""
    argv = [sys.executable, str(BENCH), case, str(tree), *([str(extra)] if extra else [])]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    values = [float(v) for v in re.findall(r"latency_ms: ([0-9.]+)", done.stdout)]
    if done.returncode != 0 or not values:
        raise RuntimeError(f"bench {case} in {tree}: {done.stderr.strip()[-300:]}")
    return statistics.median(values)


def check(case: str, threshold_ms: float, extra: Path | None, log: Path) -> int:
    """git bisect run's verdict on the checked-out release: 0 fast, 1 slow, 125 unmeasurable."""
    try:
        value = bench_ms(case, Path.cwd(), extra)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 125
    version = sh(Path.cwd(), "git", "describe", "--tags", "--always").strip()
    with log.open("a") as out:
        out.write(json.dumps({"release": version, "ms": value}) + "\n")
    return 0 if value < threshold_ms else 1


def bisect(case: str, folder: Path, releases: list[str]) -> dict:
    cache = folder / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    repo = build_target(case, folder, cache, releases)
    (repo / "debug-agent.toml").unlink()
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", f"{case} {releases[-1]}")
    sh(repo, "git", "tag", f"v{releases[-1]}")
    extra = dependencies(case, folder, cache)
    return {
        "releases": releases,
        **bisect_run(case, repo, f"v{releases[0]}", f"v{releases[-1]}", extra, folder),
    }


def bisect_run(
    case: str, repo: Path, good: str, bad: str, extra: Path | None, folder: Path
) -> dict:
    """Both ends measured, then `git bisect run` between them with the geometric-mean check;
    the repository is left on `bad`."""
    started, ends = time.monotonic(), {}
    for end in (good, bad):
        sh(repo, "git", "checkout", "-q", end)
        ends[end] = bench_ms(case, repo, extra)
    threshold = math.sqrt(ends[good] * ends[bad])
    log = folder / f"{case}-bisect.jsonl"
    log.unlink(missing_ok=True)
    sh(repo, "git", "bisect", "start", bad, good)
    # the script by path: `-m tests...` would import the target's own `tests` package
    command = [sys.executable, str(Path(__file__).resolve()), "check", case]
    command += [f"{threshold:.6f}", str(extra or ""), str(log)]
    run = subprocess.run(
        ["git", "bisect", "run", *command],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    first = re.search(r"^(\w+) is the first bad commit", run.stdout, re.MULTILINE)
    steps = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    sh(repo, "git", "bisect", "reset")
    return {
        "case": case,
        "ends_ms": ends,
        "threshold_ms": round(threshold, 3),
        "first_slow": sh(repo, "git", "describe", "--tags", "--always", first.group(1)).strip()
        if first
        else None,
        "first_slow_subject": sh(repo, "git", "log", "-1", "--format=%s", first.group(1)).strip()
        if first
        else None,
        "bisect_launches": len(steps),
        "wall_s": round(time.monotonic() - started, 1),  # both ends and the bisect
        "steps": steps,
    }


def main(argv: list[str]) -> int:
    if argv[:1] == ["check"] and len(argv) == 5:
        case, threshold, extra, log = argv[1:]
        return check(case, float(threshold), Path(extra) if extra else None, Path(log))
    if len(argv) < 4 or argv[0] not in REGRESSIONS:
        cases = ",".join(REGRESSIONS)
        print(f"usage: bisect_releases {{{cases}}} FOLDER V1 V2 ... VN", file=sys.stderr)
        return 2
    try:
        print(json.dumps(bisect(argv[0], Path(argv[1]), argv[2:]), indent=1))
    except (DownloadError, RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
