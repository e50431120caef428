"""Wall time of one lab experiment: launch the seed lab, run its benchmark, stop it.

    python tests/bench_lab.py [--runs 5]

Not a test: timings belong in benchmarks, not in assertions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from tools.config import load_config
from tools.lab.create import create_lab
from tools.measure import measure
from tools.node.nodes import LocalNode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("DEBUG_AGENT_LAB_TRUTH_DIR", tmp)
        lab = Path(tmp) / "seed"
        create_lab("seed", lab)
        config = load_config(lab)
        ready, total, verify = [], [], []
        for i in range(args.runs):
            start = time.perf_counter()
            result = measure(config, LocalNode(config.python, lab, lab), lab, lab / f"run{i}.log")
            total.append(time.perf_counter() - start)
            ready.append(result.ready_s)
            verify.append(result.bench.metrics["verify_ms"].median)
    b = config.bench
    print(
        f"seed lab, {b.requests} requests x {b.output_len} tokens (+{b.warmup} warm-up): "
        f"launch-to-ready median {statistics.median(ready):.2f} s, launch+bench+stop median "
        f"{statistics.median(total):.2f} s over {args.runs} runs; "
        f"verify {statistics.median(verify):.1f} ms/cycle (model time)"
    )


if __name__ == "__main__":
    main()
