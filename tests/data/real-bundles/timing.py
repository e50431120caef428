"""The real bundles' benches share this: `report(call)` prints `latency_ms: <value>` three times,
each the fastest of the calls made in 60 ms (a fast tree answers in microseconds, which a
single call would measure as timer noise; a loaded machine only ever slows a call down)."""

import time
from collections.abc import Callable


def report(call: Callable[[], object]) -> None:
    for _ in range(3):
        best, spent = float("inf"), 0.0
        while spent < 0.06:
            start = time.perf_counter()
            call()
            took = time.perf_counter() - start
            best, spent = min(best, took), spent + took
        print(f"latency_ms: {best * 1000:.3f}")
