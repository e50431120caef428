"""The bench of the real regressions: `python bench.py CASE TREE [PATH...]` imports the package
from the folder TREE (the scratch tree under test; PATHs: its import-only dependencies), runs
CASE's pathological input a few times and prints `latency_ms: <value>` for each run.

Standard library only: it runs under the target's Python, beside the package under test."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

RUNS = 3
SAMPLE_S = 0.02  # a fast release's call takes microseconds: one sample repeats it this long


def _validators() -> Callable[[int], object]:
    # CVE-2019-19588: validators.domain backtracks exponentially in the labels (issue #86)
    import inspect

    if not hasattr(inspect, "getargspec"):  # removed in 3.11; validators 0.12 calls it
        inspect.getargspec = inspect.getfullargspec  # type: ignore[attr-defined]
    import validators

    return lambda size: validators.domain("p" + ".wo" * size + ".")


def _sqlparse() -> Callable[[int], object]:
    # CVE-2021-32839: StripCommentsFilter's r'((\r\n|\r|\n)+) *$' on a comment full of CRLFs
    import sqlparse

    return lambda size: sqlparse.format("select 1 /*" + "\r\n" * size + "*/ x", strip_comments=True)


def _urllib3() -> Callable[[int], object]:
    # CVE-2020-7212: _encode_invalid_chars upper-cases each %xx with a str.replace of its own
    from urllib3.util.url import parse_url

    return lambda size: parse_url("http://example.com/" + "%aa" * size)


# each case: the function of the input's size, and the size measured (a size of 2 warms up)
CASES: dict[str, tuple[Callable[[], Callable[[int], object]], int]] = {
    "validators": (_validators, 17),
    "sqlparse": (_sqlparse, 16),
    "urllib3": (_urllib3, 11000),
}


def _per_call_s(run: Callable[[int], object], size: int) -> float:
    """Seconds per call of `run(size)`, over as many calls (1, 2, 4, ...) as last SAMPLE_S:
    timer jitter and scheduling would otherwise be most of a microsecond-long sample."""
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            run(size)
        elapsed = time.perf_counter() - start
        if elapsed >= SAMPLE_S:
            return elapsed / calls
        calls *= 2


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in CASES:
        print(f"usage: bench.py {{{','.join(CASES)}}} TREE [PATH...]", file=sys.stderr)
        return 2
    sys.path[:0] = argv[1:]
    load, size = CASES[argv[0]]
    run = load()
    run(2)  # lazy set-up (regexes compiled on first use) is not what is measured
    for _ in range(RUNS):
        print(f"latency_ms: {_per_call_s(run, size) * 1000:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
