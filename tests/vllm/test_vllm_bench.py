"""vLLM's benchmark output as a launch's metrics: `vllm bench serve` / benchmark_serving.py
result blocks (a real one from vLLM's issue #20469, tests/fixtures/vllm_logs/04-*), the
Speculative Decoding section's acceptance length riding along, and `--save-result` JSON records
(0.8.5 misspells `request_goodput:`; 0.10+ adds `spec_decode_acceptance_length`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tools.bench.command import run_command_bench
from tools.config import BenchSection
from tools.node.nodes import LocalNode

FIXTURES = Path(__file__).parents[1] / "fixtures" / "vllm_logs"
URL = "http://127.0.0.1:1"


def _run(bench: BenchSection, tmp_path: Path) -> dict:
    node = LocalNode(sys.executable, tmp_path, tmp_path)
    result = run_command_bench(bench, node, tmp_path, dict(os.environ), URL, 1, tmp_path / "b.log")
    return {name: (m.samples, m.unit) for name, m in result.metrics.items()}


def test_a_real_benchmark_serving_block_is_a_launch_metric(tmp_path: Path) -> None:
    log = FIXTURES / "04-bench-serving-v091-four-concurrency-blocks.log"
    bench = BenchSection(kind="command", metric="median_tpot_ms", unit="ms", command=f"cat {log}")
    metrics = _run(bench, tmp_path)
    assert metrics["median_tpot_ms"] == ([20.94], "ms")  # the first block's
    assert metrics["output_throughput"] == ([26.84], "tok/s")


def test_the_speculative_section_rides_along(tmp_path: Path) -> None:
    block = (
        "============ Serving Benchmark Result ============\n"
        "Successful requests:                     100       \n"
        "Failed requests:                         0         \n"
        "Benchmark duration (s):                  41.20     \n"
        "Request throughput (req/s):              2.43      \n"
        "Output token throughput (tok/s):         310.52    \n"
        "Peak output token throughput (tok/s):    402.00    \n"
        "Total token throughput (tok/s):          2790.17   \n"
        "---------------Time to First Token----------------\n"
        "Mean TTFT (ms):                          80.11     \n"
        "Median TTFT (ms):                        75.02     \n"
        "P99 TTFT (ms):                           160.40    \n"
        "-----Time per Output Token (excl. 1st token)------\n"
        "Mean TPOT (ms):                          9.81      \n"
        "Median TPOT (ms):                        9.64      \n"
        "P99 TPOT (ms):                           12.20     \n"
        "---------------Speculative Decoding---------------\n"
        "Acceptance rate (%):                     73.47     \n"
        "Acceptance length:                       3.20      \n"
        "Drafts:                                  6393      \n"
        "==================================================\n"
    )
    (tmp_path / "out.txt").write_text(block)
    bench = BenchSection(kind="command", metric="median_tpot_ms", unit="ms", command="cat out.txt")
    metrics = _run(bench, tmp_path)
    assert metrics["median_tpot_ms"] == ([9.64], "ms")
    assert metrics["accept_length"] == ([3.2], "tokens")
    assert metrics["median_ttft_ms"] == ([75.02], "ms")
    assert metrics["output_throughput"] == ([310.52], "tok/s")  # not the peak


def test_save_result_json_records(tmp_path: Path) -> None:
    old = {
        "date": "20250501-101010",
        "request_rate": "inf",
        "completed": 100,
        "duration": 41.2,
        "request_goodput:": None,
        "median_tpot_ms": 9.5,
        "ttfts": [0.1, 0.2],
    }
    new = {
        "date": "20261201-101010",
        "backend": "vllm",
        "completed": 100,
        "failed": 0,
        "median_tpot_ms": 9.7,
        "spec_decode_acceptance_length": 3.1,
        "generated_texts": ["a", "b"],
    }
    (tmp_path / "results.jsonl").write_text(json.dumps(old) + "\n" + json.dumps(new) + "\n")
    bench = BenchSection(
        kind="command",
        metric="median_tpot_ms",
        unit="ms",
        command="true",
        metric_jsonl="results.jsonl",
        metric_key="median_tpot_ms",
    )
    metrics = _run(bench, tmp_path)
    assert metrics["median_tpot_ms"] == ([9.5, 9.7], "ms")
    assert metrics["spec_decode_acceptance_length"][0] == [3.1]
