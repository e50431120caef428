"""Fixtures 60 onward: shapes of real logs the reader had never seen, each written anew here (no
third-party text): batch lines glued by a cut in the middle of the line, SGLang's stamp with its
`[` cut off, rank tags beside a file name, a traceback whose header is gone, a log viewer's line
numbers and c10's `[E404 ...` stamps, Ascend CANN error codes, a pretty-printed bench_serving
record cut mid-way, and a log quoted in Markdown or indented as a block.

Expectations are partial (see assert_matches), written from the fixture's text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.sglang.support import FIXTURES, assert_matches
from tools.bench.jsonl import cut_record
from tools.sglang.log import parse_log, parse_log_file
from tools.sglang.log_batch import rejoined_key
from tools.sglang.log_errors import classify
from tools.sglang.log_lines import strip_transport

NO_BENCH_NO_ARGS: dict[str, Any] = {"bench": None, "server_args": None}


def record(line: int, time: str | None, **fields: Any) -> dict[str, Any]:
    return {"line": line, "time": time, **fields}


def error(line: int, kind: str, message: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"line": line, "kind": kind}
    if message is not None:
        found["message"] = message
    return found


EXPECTED: dict[str, dict[str, Any]] = {
    # `token us|accept rate: 0.41`: the middle of the line is gone, the value after the glued key
    # is whole; the key cut at the line's end has no value. The hybrid-pool and PD keys of lines
    # 4-5 are keys of their own, never read as glued.
    "60-batch-lines-cut-mid-line-glued-keys.log": {
        **NO_BENCH_NO_ARGS,
        "errors": [],
        "decode": [
            record(
                1,
                "2026-03-10 11:20:01",
                tp_rank=0,
                running_req=12,
                token=9920,
                token_usage=None,
                accept_len=None,
                accept_rate=0.41,
                cuda_graph=True,
                gen_throughput=512.3,
                queue_req=None,
            ),
            record(
                4,
                "2026-03-10 11:20:03",
                running_req=14,
                token=None,
                token_usage=None,
                accept_rate=None,
                full_token_usage=0.31,
                swa_token_usage=0.05,
                gen_throughput=601.11,
                queue_req=0,
            ),
            record(
                5,
                "2026-03-10 11:20:04",
                running_req=14,
                token=10240,
                token_usage=0.23,
                pre_allocated_usage=0.0,
                retracted_req=0,
                gen_throughput=598.4,
            ),
        ],
        "prefill": [
            record(
                2,
                "2026-03-10 11:20:01",
                new_seq=2,
                new_token=640,
                cached_token=None,
                running_req=12,
                queue_req=7,
                cuda_graph=False,
                input_throughput=None,
            ),
            record(
                3,
                "2026-03-10 11:20:02",
                cached_token=64,
                token_usage=0.22,
                running_req=14,
                input_throughput=2210.05,
            ),
        ],
    },
    "61-stamp-bracket-cut-off-at-line-start.log": {
        **NO_BENCH_NO_ARGS,
        "errors": [],
        "prefill": [],
        "decode": [
            record(1, "2026-03-11 08:00:05", tp_rank=0, dp_rank=None, running_req=3),
            record(2, "08:00:06", tp_rank=1, dp_rank=1, gen_throughput=180.75, queue_req=1),
            record(3, "2026-03-11 08:00:07", tp_rank=0, token=820),
        ],
    },
    # A custom format: `time LEVEL pid [ranks file:line] message`.
    "62-custom-format-ranks-beside-file.log": {
        **NO_BENCH_NO_ARGS,
        "errors": [],
        "decode": [
            record(
                1,
                "2026-03-12 09:10:11",
                dp_rank=1,
                tp_rank=1,
                ep_rank=1,
                accept_len=2.05,
                gen_throughput=420.5,
            ),
            record(3, "2026-03-12 09:10:12", dp_rank=None, tp_rank=None, token=300),
        ],
        "prefill": [
            record(2, "2026-03-12 09:10:11", dp_rank=0, tp_rank=0, new_token=2048, queue_req=3)
        ],
    },
    # Source lines under the frames (`raise RuntimeError(f"NCCL error: ...")`, an OOM raised in
    # code) are no records; the exception line and the next log line are.
    "63-traceback-fragment-without-header.log": {
        **NO_BENCH_NO_ARGS,
        "decode": [],
        "prefill": [],
        "errors": [
            error(
                5,
                "nccl",
                "RuntimeError: NCCL error: remote process exited or there was a network error",
            ),
            error(6, "error"),
        ],
    },
    # `[1201] ` is a viewer's line number; c10 writes the month without its leading zero.
    "64-viewer-line-numbers-and-c10-error-stamps.log": {
        **NO_BENCH_NO_ARGS,
        "prefill": [],
        "decode": [record(4, "2026-04-04 03:02:02", tp_rank=1, running_req=2)],
        "errors": [error(1, "nccl"), error(2, "error")],
    },
    # The CANN `TraceBack` under an error code is no Python traceback.
    "65-ascend-cann-error-codes.log": {
        **NO_BENCH_NO_ARGS,
        "decode": [],
        "prefill": [],
        "errors": [
            error(2, "error"),
            error(
                3,
                "error",
                "[ERROR] 2026-02-02-12:00:01 (PID:777, Device:0, "
                "RankID:-1) ERR01100 OPS call acl api failed",
            ),
            error(4, "error", "EZ9999: Inner Error!"),
            error(5, "error"),
        ],
    },
    # Cut after `"median_tpot_ms": 7.1`: that value may have been longer, so it is null; the
    # nested `server_info` record is not read at the top level.
    "66-bench-json-pretty-printed-cut.log": {
        "server_args": None,
        "decode": [],
        "prefill": [],
        "errors": [],
        "bench": {
            "output_throughput": 1074.3606557377,
            "median_tpot_ms": None,
            "median_itl_ms": None,
            "median_ttft_ms": 240.75,
            "request_throughput": 2.0983606557377,
            "accept_length": None,
        },
    },
    "67-markdown-quoted-log.log": {
        **NO_BENCH_NO_ARGS,
        "prefill": [record(3, "2026-03-14 07:00:00", new_token=96, input_throughput=880.2)],
        "decode": [
            record(4, "2026-03-14 07:00:01", token=130),
            record(5, "2026-03-14 07:00:02", token=170, gen_throughput=72.05),
        ],
        "errors": [error(6, "traceback", "ValueError: detokenizer went away"), error(11, "error")],
    },
    # Every line indented alike: the dump's wrap falls inside `16384`, the traceback's exception
    # line sits at the block's indentation.
    "68-log-indented-as-a-block.log": {
        "bench": None,
        "server_args": {
            "model_path": "org/Model-8B",
            "tp_size": 2,
            "max_prefill_tokens": 16384,
            "attention_backend": "flashinfer",
            "chunked_prefill_size": 4096,
            "disable_cuda_graph": False,
        },
        "decode": [record(5, "2026-03-15 06:00:30", tp_rank=0, gen_throughput=210.4)],
        "prefill": [],
        "errors": [error(6, "traceback", "KeyError: 'missing-key'")],
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture(name: str) -> None:
    assert_matches(parse_log_file(FIXTURES / name).to_json_dict(), EXPECTED[name])


@pytest.mark.parametrize(
    ("glued", "key"),
    [
        ("token_usaccept_rate", "accept_rate"),
        ("cached_tounning_req", "running_req"),
        ("new_seqgen_throughput", "gen_throughput"),
        ("input_thqueue_req", "queue_req"),
    ],
)
def test_a_key_glued_by_a_cut_is_the_key_it_ends_with(glued: str, key: str) -> None:
    assert rejoined_key(glued) == key


@pytest.mark.parametrize(
    "name",
    [
        "full_token_usage",
        "swa_token_usage",
        "gpu_token_usage",
        "mamba_usage",
        "full_token",
        "cpu_token",
        "pending_token",
        "cache_hit_rate",
        "largest_len",
        "pre_allocated_usage",
        "retracted_req",
        "prealloc_req",
        "inflight_req",
        "transfer_req",
        "num_running_req",
        "cached_tok",
        "input_th",
        "token_usage",
        "accept_len",
        "est_tflops",
    ],
)
def test_keys_of_their_own_are_not_glued(name: str) -> None:
    assert rejoined_key(name) == name


def test_cut_record_keeps_only_values_known_to_be_whole() -> None:
    text = '{"a": 1.5, "nested": {"b": [1, {"c": 2}]}, "s": "x, \\"y\\"", "n": null, "last": 12.3'
    assert cut_record(text) == {"a": 1.5, "nested": {"b": [1, {"c": 2}]}, "s": 'x, "y"', "n": None}
    assert cut_record('{"a": 1, "b": [1, 2') == {"a": 1}
    assert cut_record('{"a": 1}') == {"a": 1}
    assert cut_record("no object") == {}


RECORD = {
    "backend": "sglang",
    "duration": 10.0,
    "completed": 20,
    "request_throughput": 2.0,
    "output_throughput": 512.5,
    "median_ttft_ms": 30.25,
    "median_tpot_ms": 6.5,
    "median_itl_ms": 6.25,
    "accept_length": None,
}


def test_a_whole_record_wins_over_a_cut_one_before_it() -> None:
    line = json.dumps(RECORD)
    cut = line[: line.index('"median_ttft_ms"')]  # ends after output_throughput's comma
    log = "[2026-03-16 00:00:00] next line\n"
    assert parse_log(cut + "\n" + log).to_json_dict()["bench"] == {
        "output_throughput": 512.5,
        "median_tpot_ms": None,
        "median_itl_ms": None,
        "median_ttft_ms": None,
        "request_throughput": 2.0,
        "accept_length": None,
    }
    whole = json.dumps({**RECORD, "output_throughput": 1.5})
    assert parse_log(f"{cut}\n{log}{whole}\n").to_json_dict()["bench"]["output_throughput"] == 1.5


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("[E404 03:02:01.1 ProcessGroupNCCL.cpp:1785] Exception detected by watchdog", "error"),
        ("[W404 03:02:01.1 ProcessGroupNCCL.cpp:1700] Warning: slow heartbeat", None),
        ("[ERROR] 2026-02-02-12:00:01 (PID:1) ERR01100 OPS call acl api failed", "error"),
        ("EH9999: Inner Error!", "error"),
        ("EZ9999 is documented in the CANN manual", None),
    ],
)
def test_error_level_stamps_and_codes(line: str, kind: str | None) -> None:
    assert classify(line) == kind


@pytest.mark.parametrize(
    ("line", "body", "source"),
    [
        ("[80746] [rank3]:[E321 x] y", "[E321 x] y", "rank3"),
        (
            "> > [2026-01-01 00:00:00 TP0] Decode batch",
            "[2026-01-01 00:00:00 TP0] Decode batch",
            "",
        ),
        (">", "", ""),
        ("> sglang-1  | [2026-01-01 00:00:00] x", "[2026-01-01 00:00:00] x", "sglang-1"),
    ],
)
def test_quotes_and_viewer_line_numbers_are_no_senders(line: str, body: str, source: str) -> None:
    assert strip_transport(line)[:2] == (body, source)
