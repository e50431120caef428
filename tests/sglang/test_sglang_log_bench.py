"""bench_serving result blocks and JSONL, bench_one_batch_server output (tools.bench.output)."""

from __future__ import annotations

import json

from tests.sglang.support import FIXTURES
from tools.bench.output import parse_bench_jsonl, parse_bench_one_batch, parse_bench_serving_block
from tools.sglang.log import parse_log


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_block_reads_medians_throughputs_and_accept_length() -> None:
    assert parse_bench_serving_block(fixture("23-bench-serving-modern.log")) == {
        "output_throughput": 1232.25,
        "median_tpot_ms": 24.02,
        "median_itl_ms": 66.31,
        "median_ttft_ms": 398.45,
        "request_throughput": 4.81,
        "accept_length": 2.87,
    }


def test_peak_output_throughput_is_never_taken() -> None:
    block = fixture("23-bench-serving-modern.log")
    without_output_row = "\n".join(
        line for line in block.splitlines() if not line.startswith("Output token throughput")
    )
    summary = parse_bench_serving_block(without_output_row)
    assert summary is not None and summary["output_throughput"] is None
    # Peak listed before the real row: still the real one.
    reordered = block.replace("Output token throughput (tok/s):         1232.25   \n", "")
    reordered = reordered.replace(
        "Concurrency:", "Output token throughput (tok/s):         1232.25   \nConcurrency:"
    )
    assert parse_bench_serving_block(reordered)["output_throughput"] == 1232.25


def test_old_layout_reads_by_label() -> None:
    summary = parse_bench_serving_block(fixture("24-bench-serving-old-variants.log"))
    assert summary == {
        "output_throughput": 1517.29,
        "median_tpot_ms": None,
        "median_itl_ms": 24.87,
        "median_ttft_ms": 48.51,
        "request_throughput": 7.65,
        "accept_length": None,
    }


def test_no_block_gives_none() -> None:
    assert parse_bench_serving_block("") is None
    assert parse_bench_serving_block(fixture("01-decode-0523-comma-spec-tp1.log")) is None
    assert parse_log(fixture("26-bench-one-batch-server.log")).bench is None


def test_first_complete_block_wins_over_a_cut_one() -> None:
    cut = "============ Serving Benchmark Result ============\nRequest throughput (req/s): 9.0\n"
    text = cut + fixture("24-bench-serving-old-variants.log")
    assert parse_bench_serving_block(text)["request_throughput"] == 7.65
    assert parse_bench_serving_block(cut)["request_throughput"] == 9.0


def test_jsonl_records_with_infinity_and_nan() -> None:
    records = parse_bench_jsonl(fixture("25-bench-serving-jsonl-infinity.jsonl"))
    assert len(records) == 2  # the prose line and the cut record are skipped
    assert records[0]["request_rate"] is None and records[0]["p99_itl_ms"] is None
    assert records[0]["output_throughput"] == 2115.7 and records[0]["max_concurrency"] == 16
    assert records[1]["output_throughput"] is None and records[1]["accept_length"] == 3.1
    json.dumps(records, allow_nan=False)


def test_jsonl_in_a_log_fills_bench_when_no_block() -> None:
    record = {
        "backend": "sglang",
        "completed": 3,
        "request_throughput": 0.5,
        "output_throughput": 12.5,
        "median_ttft_ms": 40,
        "median_itl_ms": 3.5,
        "median_tpot_ms": 3.25,
        "accept_length": 2.0,
        "details": [1] * 10,
    }
    text = "[2026-01-01 12:00:00] noise\n" + json.dumps(record) + "\n"
    assert parse_log(text).to_json_dict()["bench"] == {
        "output_throughput": 12.5,
        "median_tpot_ms": 3.25,
        "median_itl_ms": 3.5,
        "median_ttft_ms": 40.0,
        "request_throughput": 0.5,
        "accept_length": 2.0,
    }


def test_huge_jsonl_record_with_details_is_still_read() -> None:
    record = {
        "completed": 1,
        "request_throughput": 1.0,
        "output_throughput": 2.0,
        "median_ttft_ms": 3.0,
        "generated_texts": ["x" * 2_000_000],
    }
    assert parse_log(json.dumps(record)).to_json_dict()["bench"]["output_throughput"] == 2.0


def test_one_batch_json_is_not_taken_as_bench_serving() -> None:
    line = json.dumps({"run_name": "r", "batch_size": 1, "latency": 0.5, "output_throughput": 9.0})
    assert parse_log(line).bench is None


def test_one_batch_server_cases_and_jsonl() -> None:
    cases = parse_bench_one_batch(fixture("26-bench-one-batch-server.log"))
    assert cases[0] == {
        "batch_size": 1,
        "input_len": 1024,
        "output_len": 32,
        "latency": 0.92,
        "input_throughput": 13389.12,
        "output_throughput": 35.64,
        "last_ttft": 0.08,
        "last_gen_throughput": 38.11,
        "acc_length": 2.41,
    }
    assert cases[1]["batch_size"] == 16 and cases[1]["last_gen_throughput"] == 310.5
    assert cases[2]["run_name"] == "default" and cases[2]["overall_throughput"] == 1148.9
    assert len(cases) == 3


def test_bench_block_with_docker_prefix_and_cut() -> None:
    summary = parse_log(fixture("28-bench-block-prefixed-truncated.log")).to_json_dict()["bench"]
    assert summary["request_throughput"] == 1.23 and summary["median_ttft_ms"] == 75.5
    assert summary["output_throughput"] is None  # printed `inf`; the peak row is not it
