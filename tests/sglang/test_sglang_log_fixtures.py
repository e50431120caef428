"""Every fixture log under tests/fixtures/sglang_logs/ parses to what its text says.

Expectations are partial (see assert_matches): lists must have exactly the listed records, and each
record must carry the listed values; keys not named are not checked here. Fixtures 46 onward are
in test_sglang_log_wild.py, which also checks that every fixture has expectations.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sglang.support import FIXTURES, assert_matches
from tools.sglang.log import parse_log_file

NO_RECORDS: dict[str, Any] = {"decode": [], "prefill": [], "errors": []}


def decode(line: int, time: str | None, **fields: Any) -> dict[str, Any]:
    return {"line": line, "time": time, **fields}


EXPECTED: dict[str, dict[str, Any]] = {
    "01-decode-0523-comma-spec-tp1.log": {
        "server_args": None,
        "bench": None,
        "errors": [],
        "prefill": [
            decode(
                2,
                "2026-01-01 12:00:05",
                new_seq=1,
                new_token=158,
                cached_token=0,
                token_usage=0.08,
                running_req=31,
                queue_req=0,
                cuda_graph=True,
                input_throughput=559.53,
                tp_rank=None,
                dp_rank=None,
            )
        ],
        "decode": [
            decode(
                3,
                "2026-01-01 12:00:06",
                running_req=1,
                token=108,
                token_usage=0.0,
                accept_len=2.17,
                accept_rate=0.54,
                cuda_graph=True,
                gen_throughput=178.86,
                queue_req=0,
                tp_rank=None,
                dp_rank=None,
            ),
            decode(
                4,
                "2026-01-01 12:00:07",
                running_req=48,
                accept_len=3.02,
                accept_rate=0.67,
                cuda_graph=False,
                gen_throughput=2211.4,
                queue_req=12,
            ),
        ],
    },
    "02-decode-old-period-trailing-comma-tp-tags.log": {
        "prefill": [
            decode(
                1,
                "2024-11-02 08:15:01",
                new_seq=1,
                new_token=48,
                cached_token=0,
                token_usage=0.0,
                running_req=0,
                queue_req=0,
                cuda_graph=None,
                input_throughput=None,
                cache_hit_rate=0.0,
                tp_rank=0,
            ),
            decode(
                4,
                "2024-11-02 08:15:04",
                new_seq=2,
                new_token=1024,
                cached_token=512,
                cache_hit_rate=33.33,
                token_usage=0.13,
                running_req=8,
                queue_req=0,
            ),
        ],
        "decode": [
            decode(
                2,
                "2024-11-02 08:15:02",
                running_req=8,
                token=62531,
                token_usage=0.12,
                accept_len=None,
                accept_rate=None,
                cuda_graph=None,
                gen_throughput=186.64,
                queue_req=0,
                tp_rank=0,
                dp_rank=None,
            ),
            decode(
                3,
                "2024-11-02 08:15:03",
                accept_len=2.54,
                accept_rate=None,
                gen_throughput=201.1,
                queue_req=1,
            ),
            decode(5, "2024-11-02 08:15:05", largest_len=0, gen_throughput=190.02, queue_req=0),
        ],
        "errors": [],
    },
    "03-decode-046-054-cuda-graph-trailing.log": {
        "decode": [
            decode(
                1,
                "2025-06-10 10:00:00",
                accept_len=2.17,
                accept_rate=0.54,
                cuda_graph=True,
                gen_throughput=0.39,
                queue_req=0,
                tp_rank=0,
            ),
            decode(
                2,
                "2025-06-10 10:00:01",
                running_req=64,
                cuda_graph=False,
                gen_throughput=3120.55,
                queue_req=5,
                accept_len=None,
            ),
        ],
        "prefill": [
            decode(
                3,
                "2025-06-10 10:00:02",
                new_seq=4,
                new_token=8192,
                cached_token=100,
                token_usage=0.46,
                queue_req=1,
                cuda_graph=None,
            )
        ],
    },
    "04-decode-iter-bracket-suffixes.log": {
        "decode": [
            decode(1, "2026-02-01 09:00:00", gen_throughput=410.12, iter=40, tp_rank=None),
            decode(
                2,
                "2026-02-01 09:00:01",
                gen_throughput=405.9,
                queue_req=0,
                est_tflops=12.34,
                iter=80,
            ),
            decode(
                3,
                "2026-02-01 09:00:02",
                gen_throughput=399.0,
                queue_req=0,
                fwd_occupancy=85.5,
                fwd_idle_occupancy=97.1,
                iter=120,
            ),
            decode(4, "2026-02-01 09:00:03", gen_throughput=401.77, queue_req=0),
        ],
    },
    "05-rank-tags-combinations.log": {
        "decode": [
            decode(
                1, "2026-01-01 12:00:00.123", dp_rank=0, tp_rank=0, ep_rank=0, gen_throughput=800.0
            ),
            decode(2, "2026-01-01 12:00:00.456", dp_rank=1, tp_rank=4, ep_rank=4, queue_req=1),
            decode(
                4,
                "2026-01-01 12:00:02",
                dp_rank=3,
                tp_rank=12,
                attn_cp_rank=0,
                moe_dp_rank=1,
                gen_throughput=33.33,
            ),
            decode(5, "2026-01-01 12:00:03", dp_rank=None, tp_rank=2),
        ],
        "prefill": [
            decode(
                3,
                "2026-01-01 12:00:01",
                pp_rank=1,
                tp_rank=0,
                dp_rank=None,
                cuda_graph=False,
                input_throughput=12.0,
            )
        ],
    },
    "06-ray-prefixes.log": {
        "decode": [
            decode(2, "2026-02-26 12:03:00", tp_rank=0, running_req=3, gen_throughput=95.1),
            decode(
                3,
                "2026-02-26 12:03:01",
                tp_rank=1,
                dp_rank=1,
                cuda_graph=False,
                gen_throughput=96.2,
                queue_req=2,
            ),
            decode(5, "2026-02-26 12:03:03", tp_rank=None, cuda_graph=None, gen_throughput=97.3),
        ],
        "prefill": [
            decode(4, "2026-02-26 12:03:02", new_token=77, cached_token=3, input_throughput=1500.25)
        ],
        "errors": [],
    },
    "07-docker-compose-ansi.log": {
        "decode": [
            decode(2, "2026-03-01 00:00:10", running_req=7, gen_throughput=512.0),
            decode(4, "2026-03-01 00:00:12", running_req=8, gen_throughput=520.25),
            decode(5, "2026-03-01 00:00:13", running_req=9, gen_throughput=530.0),
            decode(6, "2026-03-01T00:00:14.000000001Z", token=910, gen_throughput=531.0),
        ],
        "prefill": [
            decode(
                3, "2026-03-01 00:00:11", tp_rank=0, new_seq=2, new_token=64, input_throughput=640.0
            )
        ],
    },
    "08-level-name-and-logging-formats.log": {
        "decode": [
            decode(1, "2026-01-01 12:00:00", running_req=1, gen_throughput=10.0),
            decode(2, "2026-01-01 12:00:01", running_req=2, tp_rank=0, gen_throughput=20.0),
            decode(3, None, running_req=3, gen_throughput=30.0),
            decode(4, "2026-01-01 12:00:03", running_req=4, tp_rank=1, gen_throughput=40.0),
        ],
        "prefill": [decode(5, "2026-01-01 12:00:04,567", new_token=5, cuda_graph=None)],
    },
    "09-time-only-and-missing-stamps.log": {
        "decode": [
            decode(1, "12:00:00.123", tp_rank=0, running_req=1),
            decode(2, "12:00:01", tp_rank=None, running_req=2),
            decode(3, None, tp_rank=None, running_req=3, gen_throughput=30.0),
            decode(4, None, tp_rank=3, running_req=4),
        ],
        "prefill": [decode(5, None, new_seq=1, cuda_graph=False, input_throughput=5.5)],
    },
    "10-npu-cpu-graph-devices.log": {
        "decode": [
            decode(1, "2026-01-01 12:00:00", cuda_graph=True),
            decode(2, "2026-01-01 12:00:01", cuda_graph=False, gen_throughput=11.0),
        ],
        "prefill": [decode(3, "2026-01-01 12:00:02", cuda_graph=False)],
    },
    "11-key-order-unknown-keys-pd-hybrid.log": {
        "prefill": [
            decode(
                1,
                "2026-01-01 12:00:00",
                new_seq=2,
                new_token=300,
                cached_token=20,
                token_usage=None,
                full_token_usage=0.01,
                swa_token_usage=0.02,
                input_throughput=1234.56,
                cuda_graph=False,
            ),
            decode(
                5,
                "2026-01-01 12:00:04",
                bootstrap_req=1,
                inflight_req=2,
                optimistic_req=0,
                replay_token=4,
                cuda_graph=True,
                input_throughput=88.0,
            ),
        ],
        "decode": [
            decode(
                2,
                "2026-01-01 12:00:01",
                pre_allocated_usage=0.05,
                prealloc_req=2,
                transfer_req=1,
                retracted_req=0,
                cuda_graph=True,
                gen_throughput=900.1,
                queue_req=3,
            ),
            decode(
                3,
                "2026-01-01 12:00:02",
                gap_latency=0.013,
                unbootstrapped_req=0,
                transferring_req=1,
                gen_throughput=880.0,
            ),
            decode(
                4,
                "2026-01-01 12:00:03",
                queue_req=7,
                gen_throughput=700.7,
                cuda_graph=False,
                token_usage=0.33,
                token=5000,
                running_req=20,
                mamba_usage=0.4,
                new_future_key=12,
            ),
        ],
    },
    "12-truncated-batch-lines.log": {
        "decode": [
            decode(
                1,
                "2026-01-01 12:00:00",
                cuda_graph=True,
                accept_rate=0.54,
                gen_throughput=None,
                queue_req=None,
            ),
            decode(2, "2026-01-01 12:00:01", accept_rate=0.54, cuda_graph=None),
            decode(3, "2026-01-01 12:00:02", token_usage=0.0, accept_len=None),
            decode(4, "2026-01-01 12:00:03", cuda_graph=True, gen_throughput=None),
            decode(5, "2026-01-01 12:00:04", cuda_graph=True, gen_throughput=None),
            decode(7, "2026-01-01 12:00:06", gen_throughput=178.86, queue_req=0),
            decode(8, "2026-01-01 12:00:07", token=108, token_usage=None),
            decode(
                9, "2026-01-01 12:00:08", token_usage=0.01, cuda_graph=True, gen_throughput=None
            ),
        ],
        "prefill": [decode(6, "2026-01-01 12:00:05", cuda_graph=True, input_throughput=None)],
    },
    "13-prose-mentions-no-records.log": {
        "decode": [decode(7, "2026-01-01 12:00:02", gen_throughput=10.0)],
        "prefill": [],
        "server_args": None,
        "errors": [],
    },
    "14-server-args-0523-dict-nested.log": {
        "server_args": {
            "model_path": "moonshotai/Kimi-K2-Instruct",
            "attention_backend": "fa3",
            "speculative_algorithm": "EAGLE",
            "tp_size": 8,
            "disable_cuda_graph": False,
            "context_length": None,
            "trust_remote_code": True,
            "mem_fraction_static": 0.85,
            "nsa_decode_backend": "fa3",
            "nsa_prefill_backend": "flashmla_sparse",
            "mm_attention_backend": None,
            "json_model_override_args": "{}",
            "port": 30000,
            "cuda_graph_config": {
                "decode": {
                    "backend": "full",
                    "max_bs": 48,
                    "bs": [
                        1,
                        2,
                        3,
                        4,
                        5,
                        6,
                        7,
                        8,
                        10,
                        12,
                        14,
                        16,
                        18,
                        20,
                        22,
                        24,
                        26,
                        28,
                        30,
                        32,
                        40,
                        44,
                        48,
                    ],
                },
                "prefill": {"backend": "disabled", "max_bs": None, "bs": []},
            },
        },
        **NO_RECORDS,
    },
    "15-server-args-old-hard-wrapped.log": {
        "server_args": {
            "model_path": "deepseek-ai/DeepSeek-V3",
            "tokenizer_path": "deepseek-ai/DeepSeek-V3",
            "kv_cache_dtype": "auto",
            "tp_size": 16,
            "attention_backend": "flashinfer",
            "speculative_algorithm": "EAGLE",
            "disable_cuda_graph": False,
            "disable_custom_all_reduce": True,
            "cuda_graph_max_bs": 160,
            "cuda_graph_bs": [
                1,
                2,
                4,
                8,
                16,
                24,
                32,
                40,
                48,
                56,
                64,
                72,
                80,
                88,
                96,
                104,
                112,
                120,
                128,
                136,
                144,
                152,
                160,
            ],
            "disaggregation_mode": "null",
            "dist_init_addr": "10.0.0.1:5000",
        },
        **NO_RECORDS,
    },
    "16-server-args-cut-in-number.log": {
        "server_args": {
            "model_path": "Qwen/Qwen3-8B",
            "tp_size": 4,
            "attention_backend": "fa3",
            "disable_cuda_graph": False,
            "speculative_algorithm": None,
            "mem_fraction_static": 0.8,
            "max_running_requests": None,
        },
    },
    "17-server-args-cut-in-true.log": {
        "server_args": {
            "model_path": "meta-llama/Llama-3.1-8B-Instruct",
            "tp_size": 1,
            "attention_backend": None,
            "disable_cuda_graph": None,
        },
    },
    "18-server-args-cut-in-string.log": {
        "server_args": {"tp_size": 2, "disable_cuda_graph": True, "attention_backend": None},
    },
    "19-server-args-dict-cut-in-nested.log": {
        "server_args": {
            "model_path": "zai-org/GLM-4.6",
            "tp_size": 8,
            "attention_backend": "triton",
            "speculative_algorithm": None,
            "disable_cuda_graph": False,
            "cuda_graph_config": None,
        },
    },
    "20-server-args-several-dumps.log": {
        "server_args": {
            "model_path": "second/Model",
            "tp_size": 4,
            "attention_backend": "fa3",
            "disable_cuda_graph": True,
            "speculative_algorithm": "EAGLE3",
        },
        "errors": [
            {
                "line": 2,
                "kind": "error",
                "message": "Scheduler hit an exception: RuntimeError: Address already in use",
            }
        ],
    },
    "21-server-args-non-literal-values.log": {
        "server_args": {
            "model_path": "/models/llama",
            "dtype": "torch.bfloat16",
            "load_format": "auto",
            "attention_backend": "triton",
            "tp_size": 2,
            "device": {"type": "cuda", "index": 0},
            "lora_paths": {"a": "/l/a", "b": "/l/b"},
            "cuda_graph_bs": [1, 2, 4],
            "speculative_algorithm": None,
            "disable_cuda_graph": False,
            "mem_fraction_static": 0.88,
            "weight": -0.0015,
            "nan_value": None,
            "path": "PosixPath('/tmp/x')",
        },
    },
    "22-server-args-ray-prefixed-dict.log": {
        "server_args": {
            "model_path": "Qwen/Qwen3-30B-A3B",
            "attention_backend": "flashinfer",
            "prefill_attention_backend": "fa3",
            "disable_cuda_graph": True,
            "chat_template": "it's fine",
            "stop_regex": "\\d+, 'x'",
            "empty": {},
            "tuple_value": [1, 2],
        },
    },
    "23-bench-serving-modern.log": {
        "bench": {
            "output_throughput": 1232.25,
            "median_tpot_ms": 24.02,
            "median_itl_ms": 66.31,
            "median_ttft_ms": 398.45,
            "request_throughput": 4.81,
            "accept_length": 2.87,
        },
        "server_args": None,
        **NO_RECORDS,
    },
    "24-bench-serving-old-variants.log": {
        "bench": {
            "output_throughput": 1517.29,
            "median_tpot_ms": None,
            "median_itl_ms": 24.87,
            "median_ttft_ms": 48.51,
            "request_throughput": 7.65,
            "accept_length": None,
        },
    },
    "25-bench-serving-jsonl-infinity.jsonl": {
        "bench": {
            "output_throughput": 2115.7,
            "median_tpot_ms": 7.05,
            "median_itl_ms": 6.8,
            "median_ttft_ms": 101.25,
            "request_throughput": 8.26,
            "accept_length": None,
        },
    },
    "26-bench-one-batch-server.log": {"bench": None, **NO_RECORDS},
    "27-bench-two-blocks-and-jsonl.log": {
        "bench": {
            "output_throughput": 500.0,
            "median_tpot_ms": 10.0,
            "median_itl_ms": 9.0,
            "median_ttft_ms": 100.0,
            "request_throughput": 2.0,
            "accept_length": None,
        },
    },
    "28-bench-block-prefixed-truncated.log": {
        "bench": {
            "output_throughput": None,
            "median_ttft_ms": 75.5,
            "request_throughput": 1.23,
            "median_tpot_ms": None,
            "median_itl_ms": None,
            "accept_length": None,
        },
    },
    "29-traceback-py311-carets-chained.log": {
        "errors": [
            {"line": 2, "kind": "traceback", "message": "RuntimeError: scheduler crashed"},
            {
                "line": 20,
                "kind": "error",
                "message": "Received sigquit from a child process. "
                "It usually means the child failed.",
            },
            {"line": 21, "kind": "traceback", "message": "SystemExit: 1"},
        ],
    },
    "30-multi-rank-interleaved-tracebacks.log": {
        "errors": [
            {
                "line": 2,
                "kind": "traceback",
                "message": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 "
                "GiB. "
                "GPU 0 has a total capacity of 79.10 GiB",
            },
            {
                "line": 3,
                "kind": "traceback",
                "message": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 "
                "GiB. "
                "GPU 1 has a total capacity of 79.10 GiB",
            },
            {"line": 11, "kind": "error"},
            {"line": 12, "kind": "traceback", "message": "RuntimeError: rank 11 failed"},
            {"line": 13, "kind": "traceback", "message": "RuntimeError: rank 12 failed"},
        ],
    },
    "31-nccl-errors.log": {
        "errors": [{"line": n, "kind": "nccl"} for n in (3, 4, 5, 6, 7, 8)],
    },
    "32-cuda-oom-and-error-lines.log": {
        "errors": [
            {"line": 4, "kind": "oom"},
            {"line": 5, "kind": "oom"},
            {
                "line": 6,
                "kind": "error",
                "message": "ERROR scheduler.py:123: Prefill out of capacity, request aborted.",
            },
            {"line": 7, "kind": "error"},
            {
                "line": 10,
                "kind": "error",
                "message": "ValueError: max_running_requests must be positive",
            },
            {"line": 12, "kind": "error"},
            {"line": 14, "kind": "error"},
            {"line": 15, "kind": "error", "message": "Fatal Python error: Segmentation fault"},
        ],
    },
    "33-traceback-truncated-then-noise.log": {
        "errors": [
            {
                "line": 1,
                "kind": "traceback",
                "message": "AttributeError: 'NoneType' object has no attribute 'shape'",
            },
            {
                "line": 9,
                "kind": "traceback",
                "message": "Scheduler hit an exception: Traceback (most recent call last):",
            },
            {"line": 13, "kind": "traceback"},
        ],
    },
    "34-full-session-0523.log": {
        "server_args": {
            "model_path": "moonshotai/Kimi-K2-Instruct",
            "attention_backend": "fa3",
            "speculative_algorithm": "EAGLE",
            "tp_size": 8,
            "disable_cuda_graph": False,
            "decode_attention_backend": None,
        },
        "prefill": [
            decode(8, "2026-01-10 09:02:00", new_token=1024, input_throughput=0.0),
            decode(9, "2026-01-10 09:02:01", new_seq=31, input_throughput=31000.12),
        ],
        "decode": [
            decode(10, "2026-01-10 09:02:05", accept_len=3.21, gen_throughput=1800.45),
            decode(11, "2026-01-10 09:02:06", accept_len=3.18, accept_rate=0.73),
            decode(12, "2026-01-10 09:02:07", running_req=49, cuda_graph=False, queue_req=3),
        ],
        "bench": {
            "output_throughput": 1700.25,
            "median_tpot_ms": 17.75,
            "median_itl_ms": 54.1,
            "median_ttft_ms": 450.5,
            "request_throughput": 1.6,
            "accept_length": 3.15,
        },
        "errors": [],
    },
    "35-python-logging-and-uvicorn-noise.log": {
        "decode": [
            decode(4, "01-10 09:00:00", running_req=5, gen_throughput=55.55),
            decode(5, "2026-01-10 09:00:01.250", running_req=6, gen_throughput=66.66),
        ],
        "errors": [{"line": 6, "kind": "error"}],
    },
    "36-empty.log": {"server_args": None, "bench": None, **NO_RECORDS},
    "38-crlf-line-endings.log": {
        "prefill": [decode(2, "2026-01-01 12:00:05", input_throughput=559.53)],
        "decode": [
            decode(3, "2026-01-01 12:00:06", gen_throughput=178.86, queue_req=0),
            decode(4, "2026-01-01 12:00:07", gen_throughput=2211.4, queue_req=12),
        ],
    },
    "39-cr-line-endings.log": {
        "decode": [
            decode(2, "2024-11-02 08:15:02"),
            decode(3, "2024-11-02 08:15:03"),
            decode(5, "2024-11-02 08:15:05", queue_req=0),
        ],
        "prefill": [decode(1, "2024-11-02 08:15:01"), decode(4, "2024-11-02 08:15:04")],
    },
    "40-server-args-soft-wrapped-decoys-first.log": {
        "server_args": {
            "model_path": "deepseek-ai/DeepSeek-V3.2-Exp",
            "attention_backend": "nsa",
            "decode_attention_backend": "flashmla",
            "mm_attention_backend": "fa3",
            "prefill_attention_backend": "fa3",
            "nsa_decode_backend": "flashmla_kv",
            "speculative_algorithm": "EAGLE",
            "disable_cuda_graph": False,
            "cuda_graph_config": {
                "decode": {"backend": "full", "max_bs": 64, "bs": [1, 2, 4, 8, 16, 32, 64]}
            },
        },
        "errors": [],
    },
    "41-server-args-decoys-in-traceback-source.log": {
        "server_args": None,
        "errors": [
            {
                "line": 2,
                "kind": "traceback",
                "message": "ValueError: tp_size must divide the number of attention heads",
            }
        ],
    },
    "42-traceback-every-line-prefixed.log": {
        "decode": [decode(1, "2026-01-05 10:00:00", tp_rank=0)],
        "errors": [
            {
                "line": 2,
                "kind": "traceback",
                "message": "RuntimeError: CUDA error: an illegal memory access was encountered",
            },
            {"line": 7, "kind": "error"},
            {
                "line": 8,
                "kind": "traceback",
                "message": "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/"
                "distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error "
                "(run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
            },
        ],
    },
    "43-truncated-counts-and-percents.log": {
        "decode": [
            decode(1, "2026-01-01 12:00:00", running_req=3, token=None),  # `625` of `62531`
            decode(2, "2026-01-01 12:00:01", token=62531, queue_req=0, fwd_occupancy=None),
            decode(4, "2026-01-01 12:00:03", running_req=None),  # `1` of `12`, say
            decode(5, "2026-01-01 12:00:04", token=900, token_usage=0.08),  # %.2f: whole
            decode(6, "2026-01-01 12:00:05", token_usage=0.08, cuda_graph=False),
        ],
        "prefill": [
            decode(3, "2026-01-01 12:00:02", cached_token=0, cache_hit_rate=None, tp_rank=0)
        ],
    },
    "44-journald-and-kubectl-prefixes.log": {
        "decode": [
            decode(1, "2026-01-05 10:00:00", tp_rank=0, running_req=1),
            decode(2, "Jan 05 10:00:01", tp_rank=None, running_req=2),  # journald's time
            decode(7, "2026-01-05 10:00:03", tp_rank=1, running_req=3),
        ],
        "errors": [
            {"line": 3, "kind": "traceback", "message": "ValueError: journald traceback"},
            {"line": 8, "kind": "traceback", "message": "KeyError: 'pod'"},
        ],
    },
    "45-v02x-gpu-prefix.log": {
        "prefill": [
            decode(
                2,
                None,
                new_seq=1,
                new_token=7,
                cached_token=1,
                cache_hit_rate=12.5,
                token_usage=None,
                tp_rank=None,
                gpu_id=0,
            )
        ],
        "decode": [
            decode(
                3,
                None,
                token=2000,
                token_usage=0.01,
                gen_throughput=39.52,
                cuda_graph=None,
                tp_rank=None,
                gpu_id=0,
            )
        ],
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture(name: str) -> None:
    assert_matches(parse_log_file(FIXTURES / name).to_json_dict(), EXPECTED[name])


def test_line_ending_fixtures_really_have_carriage_returns() -> None:
    # A checkout that rewrote line endings would make the two tests above prove nothing.
    assert b"\r\n" in (FIXTURES / "38-crlf-line-endings.log").read_bytes()
    cr_only = (FIXTURES / "39-cr-line-endings.log").read_bytes()
    assert b"\r" in cr_only and b"\n" not in cr_only
