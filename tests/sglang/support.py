"""Helpers shared by the SGLang log parser tests: fixture paths and partial-match assertions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "sglang_logs"
# Real logs users posted (tests/data/sglang-logs/README.md says where each comes from).
REAL_LOGS = REPO_ROOT / "tests" / "data" / "sglang-logs"

DECODE_KEYS = {
    "gen_throughput",
    "accept_len",
    "accept_rate",
    "cuda_graph",
    "running_req",
    "queue_req",
    "time",
    "tp_rank",
    "dp_rank",
    "line",
}
PREFILL_KEYS = {
    "new_seq",
    "new_token",
    "cached_token",
    "token_usage",
    "running_req",
    "queue_req",
    "input_throughput",
    "cuda_graph",
    "time",
    "tp_rank",
    "dp_rank",
    "line",
}
BENCH_KEYS = {
    "output_throughput",
    "median_tpot_ms",
    "median_itl_ms",
    "median_ttft_ms",
    "request_throughput",
    "accept_length",
}
TOP_KEYS = {"server", "server_args", "decode", "prefill", "bench", "errors"}


def real_log(name_prefix: str) -> Path:
    """A real log by its number."""
    matches = sorted(REAL_LOGS.glob(f"{name_prefix}-*.log"))
    assert matches, f"no real log {name_prefix}-*.log in {REAL_LOGS}"
    return matches[0]


def assert_matches(actual: Any, expected: Any, where: str = "$") -> None:
    """`expected` is a partial picture: dict keys it names must match, lists must match in
    length and element by element, scalars must be equal (bool and int told apart)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{where}: key {key!r} missing from {sorted(actual)}"
            assert_matches(actual[key], value, f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list), f"{where}: expected a list, got {actual!r}"
        assert len(actual) == len(expected), (
            f"{where}: {len(actual)} items, expected {len(expected)}: {actual!r}"
        )
        for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
            assert_matches(got, want, f"{where}[{index}]")
    else:
        assert type(actual) is type(expected) or (
            isinstance(expected, float) and type(actual) is float
        ), f"{where}: {actual!r} ({type(actual).__name__}) != {expected!r}"
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"
