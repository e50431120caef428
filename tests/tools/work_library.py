"""A tiny library for library-target tests: `src/mylib`, whose `work()` sleeps, and a bench
script at the repository's root printing `work_ms: <fastest of REPEATS calls>` three times."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.conftest import run_cli

BENCH = textwrap.dedent("""\
    import time

    from mylib.core import work

    REPEATS = 3
    for _ in range(3):
        fastest = float("inf")
        for _ in range(REPEATS):
            start = time.perf_counter()
            work()
            fastest = min(fastest, time.perf_counter() - start)
        print(f"work_ms: {fastest * 1000:.2f}")
""")


def config(
    pythonpath: str = "src",
    bench: str = "{python} bench.py",
    before: str = "",
    launches: int = 12,
    env: str = "",
) -> str:
    """The bench command in the scratch tree, `pythonpath` first on the path; `before`: more
    sections ([build], ...); `env`: more of [launch] env (`, NAME = "value"`)."""
    return before + textwrap.dedent(f"""\
        [target]
        repo = "."
        good = "good"
        [launch]
        env = {{ PYTHONPATH = "{pythonpath}"{env} }}
        [bench]
        kind = "command"
        command = "{bench}"
        metric = "work_ms"
        metric_regex = "work_ms: ([0-9.]+)"
        timeout_s = 60
        [budget]
        max_launches = {launches}
    """)


def investigate(repo: Path, symptom: str = "work_ms 20 (was 1)") -> dict:
    """`debug-agent investigate --json` in the repository; its result."""
    done = run_cli("investigate", "--symptom", symptom, "--json", cwd=repo)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return json.loads(done.stdout)
