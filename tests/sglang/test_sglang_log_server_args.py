"""The startup server_args dump: both formats, wrapping, cuts, decoys, several dumps."""

from __future__ import annotations

import pytest

from tests.sglang.support import FIXTURES
from tools.sglang.log import parse_log
from tools.sglang.server_args_dump import parse_server_args

DICT_DUMP = (
    "[2026-01-01 12:00:00] server_args={'model_path': 'org/Model-A', 'tp_size': 8, "
    "'trust_remote_code': True, 'attention_backend': 'fa3', 'quantization': None, "
    "'cuda_graph_config': {'decode': {'backend': 'full', 'max_bs': 256, "
    "'bs': [1, 2, 4]}, 'prefill': {'backend': 'disabled'}}, 'mem_fraction_static': "
    "0.875, 'chat_template': 'a, b=c', 'disable_cuda_graph': False}"
)
DICT_ARGS = {
    "model_path": "org/Model-A",
    "tp_size": 8,
    "trust_remote_code": True,
    "attention_backend": "fa3",
    "quantization": None,
    "cuda_graph_config": {
        "decode": {"backend": "full", "max_bs": 256, "bs": [1, 2, 4]},
        "prefill": {"backend": "disabled"},
    },
    "mem_fraction_static": 0.875,
    "chat_template": "a, b=c",
    "disable_cuda_graph": False,
}
CALL_DUMP = (
    "[2025-01-01 12:00:00 TP0] server_args=ServerArgs(model_path='org/Model-B', "
    "tp_size=4, disable_cuda_graph=True, attention_backend='flashinfer', "
    "cuda_graph_bs=[1, 2, 4, 8], json_model_override_args='{\"a\": 1}', "
    "speculative_algorithm=None, schedule_conservativeness=1.0)"
)
CALL_ARGS = {
    "model_path": "org/Model-B",
    "tp_size": 4,
    "disable_cuda_graph": True,
    "attention_backend": "flashinfer",
    "cuda_graph_bs": [1, 2, 4, 8],
    "json_model_override_args": '{"a": 1}',
    "speculative_algorithm": None,
    "schedule_conservativeness": 1.0,
}


def test_both_formats_read_whole() -> None:
    assert parse_log(DICT_DUMP).server_args == DICT_ARGS
    assert parse_log(CALL_DUMP).server_args == CALL_ARGS
    assert parse_server_args(CALL_DUMP) == CALL_ARGS


@pytest.mark.parametrize(("dump", "whole"), [(DICT_DUMP, DICT_ARGS), (CALL_DUMP, CALL_ARGS)])
def test_every_cut_keeps_whole_values_and_nulls_the_cut_one(dump: str, whole: dict) -> None:
    start = dump.index("server_args=")
    for cut in range(start + 14, len(dump)):
        args = parse_log(dump[:cut] + "\n[2026-01-01 12:00:01] next record").server_args or {}
        for key, value in args.items():
            assert key in whole, (cut, key)  # never a half key
            assert value is None or value == whole[key], (cut, key, value)
        # Only the value the cut falls in may be null where the whole dump has a value.
        nulled = [k for k, v in args.items() if v is None and whole[k] is not None]
        assert nulled in ([], list(args)[-1:]), (cut, nulled)


@pytest.mark.parametrize(
    "cut_text, key",
    [
        ("'tp_size': 8, 'disable_cuda_graph': Tru", "disable_cuda_graph"),
        ("'tp_size': 8, 'max_running_requests': 25", "max_running_requests"),
        ("'tp_size': 8, 'attention_backend': 'trit", "attention_backend"),
        ("'tp_size': 8, 'cuda_graph_config': {'decode': {'max_bs': 2", "cuda_graph_config"),
        ("'tp_size': 8, 'cuda_graph_bs': [1, 2, 4", "cuda_graph_bs"),
    ],
)
def test_cut_value_is_null(cut_text: str, key: str) -> None:
    args = parse_log("[2026-01-01 12:00:00] server_args={" + cut_text).server_args
    assert args == {"tp_size": 8, key: None}


def test_wrapped_dump_with_prefixed_continuation_lines() -> None:
    text = (
        "(SGLangEngine pid=7) [2026-01-01 12:00:00] server_args=ServerArgs(model_path='m', "
        "tp_si\n(SGLangEngine pid=7) ze=2, attention_backend='tri\n"
        "(SGLangEngine pid=7) ton', disable_cuda_graph=False)\n"
        "(SGLangEngine pid=7) [2026-01-01 12:00:01] Init torch distributed begin.\n"
    )
    assert parse_log(text).server_args == {
        "model_path": "m",
        "tp_size": 2,
        "attention_backend": "triton",
        "disable_cuda_graph": False,
    }


def test_decoy_keys_are_not_attention_backend() -> None:
    text = (
        "[2026-01-01 12:00:00] server_args={'mm_attention_backend': 'fa3', "
        "'decode_attention_backend': 'flashinfer', 'prefill_attention_backend': 'fa3', "
        "'nsa_decode_backend': 'flashmla_kv', 'nsa_prefill_backend': 'flashmla_sparse', "
        "'speculative_draft_attention_backend': 'triton'}"
    )
    args = parse_log(text).server_args
    assert "attention_backend" not in args and len(args) == 6


def test_first_complete_dump_wins_else_the_first_cut_one() -> None:
    args = parse_log((FIXTURES / "20-server-args-several-dumps.log").read_text()).server_args
    assert args["model_path"] == "second/Model"
    cut_only = (
        "[t] server_args=ServerArgs(model_path='a', tp_size=2, x\n[2026-01-01 00:00:00] y\n"
        "[t] server_args=ServerArgs(model_path='b', tp_size=4, z"
    )
    assert parse_log(cut_only).server_args == {"model_path": "a", "tp_size": 2}


def test_code_that_mentions_server_args_is_not_a_dump() -> None:
    text = (
        'Traceback (most recent call last):\n  File "x.py", line 1, in f\n'
        '    logger.info(f"server_args={server_args}")\n'
        "    server_args = ServerArgs(**vars(args))\nValueError: x\n"
        'print("server_args=ServerArgs(tp_size=2)")\n'
    )
    assert parse_log(text).server_args is None


def test_dump_with_no_readable_key_is_null() -> None:
    assert parse_log("[t] server_args=ServerArgs(\n[2026-01-01 00:00:00] next").server_args is None
    assert parse_log("server_args={}").server_args is None


def test_garbage_in_a_dump_raises_no_python_warning() -> None:
    """`1if` is a SyntaxWarning to Python's parser, and `'\\q'` an invalid escape: a log's
    garbage must not print either."""
    import warnings

    line = (
        "[2025-01-01 00:00:00] server_args=ServerArgs(model_path='m', tp_size=1if 2 else 3, "
        "chat_template='a\\q')"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parsed = parse_log(line)
    assert caught == [] and parsed.server_args is not None
    assert parsed.server_args["model_path"] == "m"
