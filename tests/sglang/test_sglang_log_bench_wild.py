"""bench_serving output as logs hold it: JSON records among other lines (behind prefixes,
wrapped, pretty-printed, the PD variant) and the tail of a result block without its header."""

from __future__ import annotations

import json
import random

import pytest

from tests.sglang.support import FIXTURES
from tools.bench.output import parse_bench_serving_block
from tools.sglang.log import parse_log

RECORD = {
    "backend": "sglang",
    "dataset_name": "random",
    "request_rate": float("inf"),
    "max_concurrency": 16,
    "duration": 60.12,
    "completed": 500,
    "total_input_tokens": 512000,
    "total_output_tokens": 128000,
    "request_throughput": 8.32,
    "input_throughput": 8516.1,
    "output_throughput": 2129.03,
    "mean_e2e_latency_ms": 1900.5,
    "median_e2e_latency_ms": 1850.25,
    "mean_ttft_ms": 120.5,
    "median_ttft_ms": 101.25,
    "std_ttft_ms": 20.0,
    "p99_ttft_ms": 300.0,
    "mean_tpot_ms": 7.5,
    "median_tpot_ms": 7.05,
    "mean_itl_ms": 7.4,
    "median_itl_ms": 6.8,
    "p95_itl_ms": 9.1,
    "p99_itl_ms": 15.2,
    "concurrency": 15.8,
    "accept_length": 2.44,
}
SUMMARY = {
    "output_throughput": 2129.03,
    "median_tpot_ms": 7.05,
    "median_itl_ms": 6.8,
    "median_ttft_ms": 101.25,
    "request_throughput": 8.32,
    "accept_length": 2.44,
}
LINE = json.dumps(RECORD)
NOISE = (
    '[2026-02-01 10:00:00] INFO:     127.0.0.1:5050 - "POST /generate HTTP/1.1" 200 OK\n'
    "[2026-02-01 10:00:01 TP0] Decode batch, #running-req: 1, #token: 10, token usage: 0.00, "
    "cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0\n"
)


def bench(text: str) -> dict | None:
    return parse_log(text).to_json_dict()["bench"]


@pytest.mark.parametrize(
    "prefix",
    [
        "",
        "[2026-02-01 10:00:02] ",
        "2026-02-01T10:00:02.123456789Z ",
        "bench-1  | ",
        "(BenchActor pid=4242) ",
        "[2026-02-01 10:00:02] INFO: result ",
        "result: ",
        "Feb 01 10:00:02 node bench[12]: ",
        "[pod/bench-0/bench] ",
    ],
)
def test_record_behind_any_prefix_among_log_lines(prefix: str) -> None:
    assert bench(NOISE + prefix + LINE + "\n" + NOISE) == SUMMARY


def test_record_with_a_ray_repeat_suffix_after_it() -> None:
    assert bench(f"(BenchActor pid=1) {LINE} [repeated 2x across cluster]\n") == SUMMARY


def test_json_with_one_bench_key_by_chance_is_not_a_record() -> None:
    text = NOISE + '{"event": "shutdown", "duration": 3.5}\n' + '{"completed": true}\n'
    assert bench(text) is None
    assert bench(text + LINE) == SUMMARY


def test_first_record_wins_and_a_block_wins_over_records() -> None:
    second = json.dumps({**RECORD, "output_throughput": 1.0})
    assert bench(f"{NOISE}{LINE}\n{second}\n")["output_throughput"] == 2129.03
    block = (FIXTURES / "24-bench-serving-old-variants.log").read_text()
    assert bench(f"{LINE}\n{block}")["output_throughput"] == 1517.29


@pytest.mark.parametrize("seed", range(8))
def test_record_hard_wrapped_anywhere(seed: int) -> None:
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(LINE) - 1), k=rng.randint(1, 6)))
    pieces = [LINE[a:b] for a, b in zip([0, *cuts], [*cuts, len(LINE)], strict=True)]
    if any(p.lstrip().startswith('{"') for p in pieces[1:]):
        return  # a piece that looks like a new record ends the wrapped one, by design
    assert bench(NOISE + "\n".join(pieces) + "\n" + NOISE) == SUMMARY


@pytest.mark.parametrize("indent", [2, 4, "\t"])
def test_pretty_printed_record(indent: int | str) -> None:
    text = "Results:\n" + json.dumps(RECORD, indent=indent) + "\n[2026-02-01 10:00:09] next\n"
    assert bench(text) == SUMMARY


def test_a_cut_record_gives_way_to_the_next_one() -> None:
    text = LINE[:200] + "\n" + json.dumps({**RECORD, "median_itl_ms": 1.5}) + "\n"
    assert bench(text)["median_itl_ms"] == 1.5
    assert bench(LINE[:200] + "\n" + NOISE) is None


def test_pd_record_reads_its_top_level_summary_only() -> None:
    record = {
        **RECORD,
        "accept_length": None,
        "pd_separated": True,
        "server_info": {
            "decode": [{"internal_states": [{"avg_spec_accept_length": 3.5}]}],
            "prefill": [{"internal_states": [{}]}],
        },
        "median_itl_ms": {"decode": 6.8},
    }  # not a number: null, never searched into
    assert bench(json.dumps(record)) == {**SUMMARY, "accept_length": None, "median_itl_ms": None}


TAIL = (
    "Mean ITL (ms):                           23.41     \n"
    "Median ITL (ms):                         19.87     \n"
    "P95 ITL (ms):                            40.12     \n"
    "P99 ITL (ms):                            88.50     \n"
    "Max ITL (ms):                            1203.77   \n"
    "==================================================\n"
)
ITL_ONLY = {
    "output_throughput": None,
    "median_tpot_ms": None,
    "median_itl_ms": 19.87,
    "median_ttft_ms": None,
    "request_throughput": None,
    "accept_length": None,
}


@pytest.mark.parametrize(
    "prefix", ["", "[2026-02-01 10:00:02] ", "bench-1  | ", "# ", "> ", "(BenchActor pid=4242) "]
)
def test_tail_behind_prefixes(prefix: str) -> None:
    text = NOISE + "".join(prefix + line + "\n" for line in TAIL.splitlines())
    assert bench(text) == ITL_ONLY


def test_tail_then_namespace_is_not_server_args() -> None:
    namespace = (
        "Namespace(backend='sglang', base_url=None, host='0.0.0.0', port=30000, "
        "dataset_name='random', num_prompts=200, request_rate=inf, max_concurrency=64, "
        "seed=1, warmup_requests=1)\n"
    )
    result = parse_log(TAIL + namespace).to_json_dict()
    assert result["bench"] == ITL_ONLY and result["server_args"] is None


def test_tail_without_values_needs_its_closing_rule() -> None:
    rows = "P99 ITL (ms):                            88.50\nMax ITL (ms):          1203.77\n"
    assert bench(rows) is None
    assert bench(rows + "=" * 50 + "\n") == {**ITL_ONLY, "median_itl_ms": None}


@pytest.mark.parametrize(
    "text",
    [
        "Concurrency: 3\n",  # one row is not a tail
        "Median ITL (ms): 5.0\nsomething else: 1\nMedian TTFT (ms): 7.0\n",  # rows apart
        "median latency: 5.0\nmax latency: 9.0\n==========\n",  # not bench_serving's labels
        "Decode.  median latency: 0.01 s, median throughput: 100.00 token/s\n",
    ],
)
def test_lines_that_are_no_tail(text: str) -> None:
    assert bench(text) is None


def test_json_record_wins_over_a_tail_and_the_block_parser_ignores_both() -> None:
    assert bench(TAIL + LINE + "\n") == SUMMARY
    assert parse_bench_serving_block(TAIL + LINE + "\n") is None


def test_block_behind_timestamps_reads_like_the_plain_block() -> None:
    block = (FIXTURES / "23-bench-serving-modern.log").read_text()
    stamped = "".join(
        f"[2026-02-01 10:00:0{n % 10}] {line}\n" for n, line in enumerate(block.splitlines())
    )
    assert bench(stamped) == bench(block)
