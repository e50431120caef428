"""The sampling profiler's overhead on a bench: the same Python workload (pure-Python work and
a regex), traced each time, with the profiler on and off, alternating; prints the medians of
the bench's latency and of the process's CPU time (the sampler thread's own included), and
the overhead of each. Goal (issue #33): <= 5 % of the metric.

    python tests/bench_profile.py [--runs 15] [--interval-ms 10]

Not a test: timings belong in benchmarks, not in assertions.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.proc.import_trace import PROFILE_INTERVAL_VAR, PROFILE_VAR, traced_env  # noqa: E402

WORKLOAD = """\
import re, threading, time
PATTERN = re.compile(r"(a|aa)+$")
def parse(n):
    return sorted(str(i * 7919 % 1000) for i in range(n))
def scan():
    for _ in range(20):
        PATTERN.match("a" * 16 + "b")
def idle():
    time.sleep(10)
threading.Thread(target=idle, daemon=True).start()  # a thread that waits, as servers have
times = []
for _ in range(30):
    started = time.perf_counter()
    parse(3000)
    scan()
    times.append((time.perf_counter() - started) * 1000)
print(f"latency_ms: {sorted(times)[len(times) // 2]:.3f}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--interval-ms", type=float, default=10.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-profile-"))
    (folder / "work.py").write_text(WORKLOAD)
    measured: dict[str, list[float]] = {"off": [], "on": []}
    cpu: dict[str, list[float]] = {"off": [], "on": []}
    for run in range(args.runs):
        for mode in ("off", "on") if run % 2 == 0 else ("on", "off"):  # neither always first
            env = traced_env(
                {
                    PROFILE_VAR: "1" if mode == "on" else "0",
                    PROFILE_INTERVAL_VAR: str(args.interval_ms),
                },
                folder / f"trace-{mode}-{run}",
                folder,
            )
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run(
                [sys.executable, "work.py"], cwd=folder, env=env, capture_output=True, text=True
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            measured[mode].append(float(done.stdout.split()[-1]))
            used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            cpu[mode].append(used * 1000)
    off, on = statistics.median(measured["off"]), statistics.median(measured["on"])
    cpu_off, cpu_on = statistics.median(cpu["off"]), statistics.median(cpu["on"])
    print(
        f"profiler at {args.interval_ms:g} ms: latency off {off:.3f} ms, on {on:.3f} ms "
        f"({on / off - 1:+.1%}); the process's CPU off {cpu_off:.0f} ms, on {cpu_on:.0f} ms "
        f"({cpu_on / cpu_off - 1:+.1%}); medians of {args.runs} runs"
    )


if __name__ == "__main__":
    main()
