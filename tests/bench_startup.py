"""Start-up time of the CLI: median wall time of `debug-agent --help` (goal: <= 0.3 s).

    python tests/bench_startup.py [--runs 20]

Not a test: timings belong in benchmarks, not in assertions.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    exe = shutil.which("debug-agent")
    argv = [exe, "--help"] if exe else [sys.executable, "-m", "agent", "--help"]
    times = []
    for _ in range(args.runs + 1):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    times = times[1:]  # the first run warms the page cache
    print(
        f"{' '.join(argv)}: median {statistics.median(times):.3f} s, "
        f"min {min(times):.3f} s, max {max(times):.3f} s over {len(times)} runs"
    )


if __name__ == "__main__":
    main()
