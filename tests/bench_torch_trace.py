"""Reading a large torch profiler trace: a gzipped trace of `--launches` kernel launches (a
python_function frame, a cudaLaunchKernel and a kernel each: 3 events, about 520 bytes), read
by `read_torch_traces` in a process of its own; prints the trace's size, the time and the
process's peak memory. Goal: memory well under the trace's own size (read whole, a 319 MB
trace took 1.8 GB).

    python tests/bench_torch_trace.py [--launches 700000]

Not a test: timings belong in benchmarks, not in assertions.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READ = """
import resource, sys, time
from pathlib import Path
from tools.profile.torch_trace import read_torch_traces
start = time.perf_counter()
profile = read_torch_traces(Path(sys.argv[1]), Path(sys.argv[2]))
seconds = time.perf_counter() - start
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{profile.samples} kernels read in {seconds:.1f} s, peak memory {peak_mb:.0f} MB")
"""


def write_trace(path: Path, launches: int) -> int:
    """The trace's size, uncompressed, in bytes."""
    size = 0
    with gzip.open(path, "wt") as out:
        out.write('{"schemaVersion": 1, "traceEvents": [')
        for i in range(launches):
            frame = f"python/sglang/srt/model.py({10 + i % 50}): forward"
            events = [
                {"ph": "X", "cat": "python_function", "name": frame, "pid": 1, "tid": 1,
                 "ts": i * 10.0, "dur": 8.0, "args": {"Python id": i}},
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                 "tid": 1, "ts": i * 10.0 + 1, "dur": 2.0, "args": {"correlation": i}},
                {"ph": "X", "cat": "kernel", "name": f"gemm_{i % 7}", "pid": 0, "tid": 7,
                 "ts": i * 10.0 + 3, "dur": 5.0, "args": {"correlation": i, "stream": 7}},
            ]  # fmt: skip
            text = ("," if i else "") + ",".join(json.dumps(e) for e in events)
            size += len(text)
            out.write(text)
        out.write("]}")
    return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=700_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        traces = Path(folder) / "traces"
        traces.mkdir()
        size = write_trace(traces / "run-TP-0.trace.json.gz", args.launches)
        print(f"trace: {args.launches * 3} events, {size / 1e6:.0f} MB uncompressed")
        subprocess.run([sys.executable, "-c", READ, str(traces), folder], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
