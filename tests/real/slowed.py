"""The real regressions under a machine that slows whole processes: a benchmark, not a test.

On a shared VM one bench process in five or so runs far slower than its neighbours (all its
runs, so the best of three does not help): markdown2's tree read 12 ms in most processes and
21 in some. This runs `investigate` on a case of tests/data/real-bundles with its bench wrapped:
each launch, with chance SLOW (drawn from the seed and the launch's number, so a run repeats),
reports every value FACTOR times higher. It prints one JSON line per seed and a tally: the
first bad commit right, wrong, or not named, and the launches against `git bisect run`'s.

    python -m tests.real.slowed CASE [--seeds 1-8] [--slow 0.2] [--factor 1.7]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.real.bundles import Case, cases, checkout, investigate


def slowed_bench(argv: list[str]) -> int:
    """`slowed.py --bench SEED SLOW FACTOR COUNTER -- COMMAND...`: COMMAND, its values scaled
    by FACTOR on the launches the seed picks (the COUNTER file numbers the launches)."""
    seed, slow, factor, counter = argv[:4]
    command = argv[5:]
    path = Path(counter)
    number = int(path.read_text() or 0) + 1 if path.exists() else 1
    path.write_text(str(number))
    slowed = random.Random(f"{seed}-{number}").random() < float(slow)
    done = subprocess.run(command, capture_output=True, text=True)
    scale = float(factor) if slowed else 1.0
    out = re.sub(
        r"(latency_ms: )([0-9.]+)",
        lambda m: f"{m.group(1)}{float(m.group(2)) * scale:.6f}",
        done.stdout,
    )
    sys.stdout.write(out)
    sys.stderr.write(done.stderr)
    return done.returncode


def one_run(case: Case, seed: int, slow: float, factor: float, folder: Path) -> dict:
    repo = checkout(case, folder)
    toml = repo / "debug-agent.toml"
    counter = folder / "launches"
    script = Path(__file__).resolve()
    wrapper = f"{{python}} {script} --bench {seed} {slow} {factor} {counter} -- "
    text = toml.read_text().replace('command = "', f'command = "{wrapper}', 1)
    toml.write_text(text)
    result = investigate(case, repo)
    first = ((result.get("bisection") or {}).get("first_bad") or {}).get("sha")
    shas = {c["commit"]["sha"] for c in result.get("culprits", []) if c.get("commit")}
    return {
        "seed": seed,
        "status": result["status"],
        "first_bad": (first or "")[:12],
        "right": first == case.culprit_sha,
        "culprit_commits": sorted(s[:12] for s in shas),
        "launches": result["launches"],
        "bench_processes": int(counter.read_text()) if counter.exists() else 0,
        "session": result.get("session_dir", ""),
    }


def main(argv: list[str]) -> int:
    if argv[:1] == ["--bench"]:
        return slowed_bench(argv[1:])
    parser = argparse.ArgumentParser()
    parser.add_argument("case")
    parser.add_argument("--seeds", default="1-8")
    parser.add_argument("--slow", type=float, default=0.2)
    parser.add_argument("--factor", type=float, default=1.7)
    parser.add_argument("--keep", type=Path, help="a folder to keep each run's session in")
    args = parser.parse_args(argv)
    case = next(c for c in cases() if c.name == args.case)
    low, _, high = args.seeds.partition("-")
    runs = []
    for seed in range(int(low), int(high or low) + 1):
        with tempfile.TemporaryDirectory() as scratch:
            folder = args.keep / f"seed-{seed}" if args.keep else Path(scratch)
            folder.mkdir(parents=True, exist_ok=True)
            runs.append(one_run(case, seed, args.slow, args.factor, folder))
        print(json.dumps(runs[-1]), flush=True)
    right = sum(r["right"] for r in runs)
    named = sum(bool(r["first_bad"]) for r in runs)
    print(
        json.dumps(
            {
                "case": case.name,
                "right": right,
                "wrong": named - right,
                "not_named": len(runs) - named,
                "launches": sorted(r["launches"] for r in runs),
                "git_bisect_launches": case.git_bisect_launches,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
