"""`debug-agent paths` at the scale of a real upgrade: every file that changed between two
SGLang releases (unpacked from their wheels), judged against the seed story's configuration
(Kimi-K2.5, triton, an EAGLE-3 draft, sm120) in the newer release's log format. Prints the
files decided, the wall time (cold: no summary cache; warm: the second run) and the peak
memory of the `paths` process. Goals (issue #30): half decided, <= 15 s, <= 400 MB.

    python tests/bench_paths.py [--old 0.5.22] [--new 0.5.23] [--folder /tmp/bench-paths]

Not a test: timings belong in benchmarks, not in assertions.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.code_paths.release_cases import cases  # noqa: E402
from tests.code_paths.release_source import download  # noqa: E402


def changed_files(old: Path, new: Path) -> list[str]:
    """Files added, removed or changed between two unpacked trees, wheel-relative."""
    found = set()
    for a, b in ((old, new), (new, old)):
        for root, _, files in os.walk(b):
            for name in files:
                rel = os.path.relpath(os.path.join(root, name), b)
                other = a / rel
                if not other.exists() or not filecmp.cmp(b / rel, other, shallow=False):
                    found.add(rel)
    return sorted(found)


def run(log: Path, repo: Path, files: list[str], state: Path) -> tuple[dict, float, float]:
    """One `paths` run: its report, its wall time, the peak memory of its process in MB."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "agent", "paths", "--log", str(log), "--repo", str(repo)]
        + ["--json", *files],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "XDG_STATE_HOME": str(state)},
    )
    wall = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return json.loads(done.stdout), wall, peak_mb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="0.5.22")
    parser.add_argument("--new", default="0.5.23")
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "bench-paths")
    args = parser.parse_args()
    old = download(args.old, args.folder / args.old)
    new = download(args.new, args.folder / args.new)
    files = [f for f in changed_files(old, new) if not f.endswith(".complete")]
    seed = next(c for c in cases() if c.name == "kimi-k2.5-triton-eagle3-sm120")
    log = args.folder / f"kimi-{args.new}.log"
    log.write_text(seed.log(new / "sglang"))
    state = Path(tempfile.mkdtemp(prefix="bench-paths-state-"))
    report, cold, peak = run(log, new, files, state)
    _, warm, _ = run(log, new, files, state)
    counts = Counter(f["status"] for f in report["files"])
    decided = counts["on"] + counts["off"]
    print(
        f"{args.old} -> {args.new}: {len(files)} changed files; decided {decided} "
        f"({decided / len(files):.1%}: {counts['on']} on, {counts['off']} off), "
        f"{counts['unknown']} unknown; {cold:.1f} s cold, {warm:.1f} s warm, {peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
