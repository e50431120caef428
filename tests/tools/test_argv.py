"""Command-line edits, as argparse would read the result."""

from __future__ import annotations

from tools.argv import set_option
from tools.lab.serve import without_speculative

ARGV = [
    "python",
    "-m",
    "sglang.launch_server",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-num-steps=2",
    "--disable-cuda-graph",
    "--port",
    "1",
]


def test_without_speculative_drops_options_and_values() -> None:
    assert without_speculative(ARGV) == [
        "python",
        "-m",
        "sglang.launch_server",
        "--tp",
        "8",
        "--disable-cuda-graph",
        "--port",
        "1",
    ]


def test_set_option_replaces_removes_and_adds_switches() -> None:
    assert set_option(ARGV, "--tp", "4")[-2:] == ["--tp", "4"] and "8" not in set_option(
        ARGV, "--tp", "4"
    )
    assert "--disable-cuda-graph" not in set_option(ARGV, "--disable-cuda-graph", None)
    assert set_option(ARGV, "--enable-metrics", "")[-1] == "--enable-metrics"
