"""Fixtures 46 onward: formats seen in logs users posted (fragments of the server_args dump,
bench_serving JSON among log lines, a result block's tail, docker json-file and CRI logs).

Expectations are partial, as in test_sglang_log_fixtures.py; each was written from the fixture's
text, not from the parser's output.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sglang.support import FIXTURES, assert_matches
from tests.sglang.test_sglang_log_fixtures import EXPECTED as EARLIER
from tests.sglang.test_sglang_log_wild2 import EXPECTED as LATER
from tests.sglang.test_sglang_log_wild3 import EXPECTED as LATEST
from tools.sglang.log import parse_log_file

NO_RECORDS: dict[str, Any] = {"decode": [], "prefill": [], "errors": []}
JSONL_RECORD = {
    "output_throughput": 470.75469529455864,
    "median_tpot_ms": 49.45251944893692,
    "median_itl_ms": 38.86313899420202,
    "median_ttft_ms": 15833.622181991814,
    "request_throughput": 0.47075469529455866,
    "accept_length": None,
}


def record(line: int, time: str | None, **fields: Any) -> dict[str, Any]:
    return {"line": line, "time": time, **fields}


EXPECTED: dict[str, dict[str, Any]] = {
    # The first item (`ama-3.1-70B-Instruct'`, the end of model_path) is dropped; tp_size ends
    # the piece (`tp_size=1` of `tp_size=16`): null.
    "46-server-args-fragment-call-cut-both-ends.log": {
        "server_args": {
            "tokenizer_path": "meta-llama/Llama-3.1-70B-Instruct",
            "tokenizer_mode": "auto",
            "dtype": "bfloat16",
            "quantization": None,
            "mem_fraction_static": 0.87,
            "chunked_prefill_size": 8192,
            "max_prefill_tokens": 16384,
            "schedule_policy": "fcfs",
            "page_size": 1,
            "tp_size": None,
        },
        "decode": [record(7, "2025-03-10 14:06:01", gen_throughput=21.07, tp_rank=0)],
        "prefill": [record(6, "2025-03-10 14:06:00", new_token=512)],
        "errors": [],
        "bench": None,
    },
    # Starts inside cuda_graph_config's nested dicts: no key of theirs is read at the top level.
    "47-server-args-fragment-dict-cut-in-nested.log": {
        "server_args": {
            "mem_fraction_static": 0.85,
            "max_running_requests": 48,
            "tp_size": 8,
            "ep_size": 8,
            "attention_backend": "fa3",
            "decode_attention_backend": None,
            "speculative_algorithm": "EAGLE",
            "speculative_num_steps": 3,
            "disable_cuda_graph": False,
            "kv_cache_dtype": "fp8_e4m3",
            "page_size": 64,
            "reasoning_parser": "kimi_k2",
            "tool_call_parser": None,
        },
        "decode": [record(4, "2026-01-10 09:02:05", dp_rank=0, tp_rank=0, accept_len=3.21)],
    },
    "48-server-args-fragment-hard-wrapped-no-first-line.log": {
        "server_args": {
            "context_length": None,
            "device": "cuda",
            "mem_fraction_static": 0.79,
            "max_running_requests": None,
            "schedule_policy": "lpm",
            "tp_size": 4,
            "attention_backend": "flashinfer",
            "disable_cuda_graph": True,
            "disable_custom_all_reduce": True,
            "speculative_algorithm": None,
            "speculative_eagle_topk": 8,
            "torchao_config": "",
            "triton_attention_num_kv_splits": 8,
            # the piece ends with the dump's `)`: its last item is whole
            "enable_hierarchical_cache": False,
        },
        "decode": [record(22, "2025-01-20 03:12:30", running_req=4, gen_throughput=112.38)],
    },
    "49-server-args-fragment-decoys-not-dumps.log": {
        "server_args": None,
        "bench": None,
        "prefill": [],
        "decode": [record(12, "2025-03-10 14:06:01")],
        "errors": [
            {
                "line": 7,
                "kind": "traceback",
                "message": "TypeError: Engine.__init__() got an unexpected keyword argument "
                "'disable_cuda_graph'",
            }
        ],
    },
    "50-server-args-complete-dump-wins-over-fragment.log": {
        "server_args": {
            "model_path": "new/Model",
            "tp_size": 8,
            "attention_backend": "fa3",
            "disable_cuda_graph": False,
            "speculative_algorithm": "EAGLE",
            "mem_fraction_static": 0.9,
        },
        **NO_RECORDS,
    },
    # The first record of bench_serving's (not the warm-up line that has one of its keys).
    "51-bench-jsonl-mixed-with-prefixed-log-lines.log": {
        "bench": {**JSONL_RECORD, "accept_length": 2.63},
        "decode": [record(6, "2026-02-01 10:05:00", gen_throughput=12.5)],
        "server_args": None,
    },
    "52-bench-jsonl-pd-disaggregation.jsonl": {
        "bench": {**JSONL_RECORD, "accept_length": 3.07},
        "server_args": None,
        **NO_RECORDS,
    },
    "53-bench-jsonl-wrapped-over-lines.log": {"bench": JSONL_RECORD, **NO_RECORDS},
    "54-bench-json-pretty-printed.log": {
        "bench": {**JSONL_RECORD, "median_itl_ms": 12.5, "accept_length": 2.91},
        **NO_RECORDS,
    },
    # The Namespace dump after the tail is the benchmark's arguments, not the server's.
    "55-bench-tail-itl-then-namespace.log": {
        "bench": {
            "output_throughput": None,
            "median_tpot_ms": None,
            "median_itl_ms": 19.87,
            "median_ttft_ms": None,
            "request_throughput": None,
            "accept_length": None,
        },
        "server_args": None,
        **NO_RECORDS,
    },
    "56-bench-tail-commented-no-closing-rule.log": {
        "bench": {
            "output_throughput": None,
            "median_tpot_ms": 70.23,
            "median_itl_ms": 68.15,
            "median_ttft_ms": 2465.51,
            "request_throughput": None,
            "accept_length": None,
        },
        "server_args": None,
        **NO_RECORDS,
    },
    # docker json-file: the dump is over 16 KB, so docker wrote it as two records (lines 1-2).
    "57-docker-json-file-session.log": {
        "server_args": {
            "model_path": "zai-org/GLM-4.6-FP8",
            "attention_backend": "fa3",
            "tp_size": 8,
            "speculative_algorithm": None,
            "kv_cache_dtype": "auto",
            "nsa_decode_backend": "flashmla_kv",
            "forward_hooks": None,
            "cuda_graph_config": {"decode": {"backend": "full", "max_bs": 256}},
        },
        "prefill": [
            record(
                4,
                "2026-03-02 08:01:00",
                tp_rank=0,
                new_token=2048,
                cuda_graph=False,
                input_throughput=6512.77,
            )
        ],
        "decode": [
            record(
                5,
                "2026-03-02 08:01:01",
                tp_rank=0,
                running_req=1,
                gen_throughput=88.41,
                queue_req=0,
            ),
            # no time of SGLang's: docker's own
            record(
                6,
                "2026-03-02T08:01:03.250000000Z",
                tp_rank=None,
                running_req=2,
                gen_throughput=160.05,
            ),
        ],
        "errors": [
            {
                "line": 7,
                "kind": "traceback",
                "message": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 "
                "GiB. "
                "GPU 0 has a total capacity of 79.19 GiB of which 1.06 GiB is free.",
            },
            {
                "line": 15,
                "kind": "error",
                "message": "Received sigquit from a child process. It usually means the child "
                "failed.",
            },
            {
                "line": 16,
                "kind": "nccl",
                "message": "node-1:123:456 [0] NCCL WARN Cuda failure 'out of memory'",
            },
        ],
        "bench": None,
    },
    # A progress bar's `\r` inside a record, a CRLF record, a bench record docker split in two
    # (lines 4-5), colours inside a value, and a last record cut mid-way by the file's end.
    "58-docker-json-progress-crlf-split-cut.log": {
        "decode": [
            record(3, "2026-03-02 09:00:01", running_req=4, gen_throughput=300.5, queue_req=0),
            record(6, "2026-03-02 09:00:03", running_req=8, gen_throughput=310.25, queue_req=1),
            record(7, "2026-03-02 09:00:09", running_req=3, gen_throughput=41.27, queue_req=None),
        ],
        "bench": {
            "output_throughput": 481.95,
            "median_tpot_ms": 7.12,
            "median_itl_ms": 7.03,
            "median_ttft_ms": 2465.51,
            "request_throughput": 0.47,
            "accept_length": None,
        },
        "errors": [],
        "prefill": [],
        "server_args": None,
    },
    # CRI (containerd): `P` marks a line continued by the next record.
    "59-cri-containerd-partial-lines.log": {
        "server_args": {
            "model_path": "Qwen/Qwen3-30B-A3B",
            "tp_size": 2,
            "ep_size": 2,
            "attention_backend": "flashinfer",
            "disable_cuda_graph": False,
            "disaggregation_mode": "null",
        },
        "prefill": [
            record(4, "2026-03-02 10:01:00", new_seq=3, cached_token=120, input_throughput=9100.5)
        ],
        "decode": [
            record(5, "2026-03-02 10:01:01", gen_throughput=240.33),
            record(6, "2026-03-02T10:01:02.000000015Z", gen_throughput=241.09),
        ],
        "errors": [
            {
                "line": 7,
                "kind": "traceback",
                "message": "RuntimeError: NCCL error: unhandled system error (run with "
                "NCCL_DEBUG=INFO for details)",
            },
            {"line": 11, "kind": "error"},
        ],
    },
}


def test_every_fixture_has_expectations() -> None:
    names = {p.name for p in FIXTURES.iterdir()} - {"37-garbage-binary.bin"}
    # LATER: fixtures 60 onward; LATEST: 69 onward
    known = set(EARLIER) | set(EXPECTED) | set(LATER) | set(LATEST)
    assert names == known, names ^ known
    assert not set(EARLIER) & set(EXPECTED) and not (set(EARLIER) | set(EXPECTED)) & set(LATER)
    assert not (set(EARLIER) | set(EXPECTED) | set(LATER)) & set(LATEST)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture(name: str) -> None:
    assert_matches(parse_log_file(FIXTURES / name).to_json_dict(), EXPECTED[name])


def test_split_records_really_are_split() -> None:
    # docker ends only the last part of a split line with `\n`: the fixtures must hold such parts.
    lines = (FIXTURES / "57-docker-json-file-session.log").read_text().splitlines()
    assert len(lines[0]) > 16384 and '\\n"' not in lines[0] and '\\n"' in lines[1]
    assert "\\r\\n" in (FIXTURES / "58-docker-json-progress-crlf-split-cut.log").read_text()
