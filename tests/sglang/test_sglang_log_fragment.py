"""Pieces of a server_args dump cut at both ends (tools.sglang.server_args_fragment): whole
items are read, cut ones are null or dropped, and ordinary `key=value` lines are not taken for
pieces."""

from __future__ import annotations

import random
import time

import pytest

from tests.sglang.support import FIXTURES, real_log
from tools.sglang.log import parse_log

CALL = (
    "model_path='org/Model-A', tokenizer_path='org/Model-A', tokenizer_mode='auto', "
    "cuda_graph_bs=[1, 2, 4, 8], device=device(type='cuda', index=0), "
    "chat_template='a, tp_size=99, b', trust_remote_code=True, dtype='bfloat16', "
    "mem_fraction_static=0.88, max_running_requests=None, chunked_prefill_size=8192, "
    "moe_dp_size=2, tp_size=16, dp_size=1, attention_backend='flashinfer', "
    "speculative_algorithm='EAGLE', disable_cuda_graph=False, enable_dp_attention=True)"
)
STAMP = "[2025-05-05 07:07:07] "


def args_of(piece: str) -> dict | None:
    """The server_args of a log where `piece` stands alone between two records."""
    return parse_log(f"{STAMP}before\n{piece}\n{STAMP}after\n").server_args


def test_piece_starting_at_an_item_nulls_its_first_key_and_reads_the_rest() -> None:
    piece = CALL[CALL.index("trust_remote_code") : CALL.index("tp_size=16") + len("tp_size=1")]
    assert args_of(piece) == {
        "trust_remote_code": None,  # may be the tail of a longer key: never a value
        "dtype": "bfloat16",
        "mem_fraction_static": 0.88,
        "max_running_requests": None,
        "chunked_prefill_size": 8192,
        "moe_dp_size": 2,
        "tp_size": None,
    }  # `tp_size=1` of `tp_size=16`


@pytest.mark.parametrize(
    ("start", "first_read"),
    [
        ("h='org/Model-A', tokenizer_mode", "tokenizer_mode"),  # mid-key: the cut item is dropped
        ("l-A', tokenizer_mode", "tokenizer_mode"),  # mid-string
        ("99, b', trust_remote_code", "trust_remote_code"),  # inside a string holding `, k=v`
        ("4, 8], device", "device"),  # inside a list
        ("index=0), chat_template", "chat_template"),  # inside a nested call
    ],
)
def test_piece_cut_inside_an_item_starts_at_the_next_whole_one(start: str, first_read: str) -> None:
    head = CALL[: CALL.index(start)]
    piece = CALL[CALL.index(start) :]
    args = args_of(piece)
    assert args is not None and next(iter(args)) == first_read
    assert "tp_size" not in args or args["tp_size"] == 16  # never the 99 inside chat_template
    for key in args:
        assert f"{key}=" not in head or key in piece  # nothing read from before the start


def test_piece_that_starts_on_a_longer_key_tail_is_null_not_a_value() -> None:
    piece = CALL[CALL.index("dp_size=2") :]  # `dp_size=2` is the end of `moe_dp_size=2`
    args = args_of(piece)
    assert args is not None and args["dp_size"] == 1  # the real dp_size, read whole later
    piece = "dp_size=2, " + CALL[CALL.index("attention_backend") :]
    assert args_of(piece)["dp_size"] is None


def test_piece_ending_with_the_dumps_bracket_keeps_its_last_item() -> None:
    args = args_of(CALL[CALL.index("l-A', tokenizer_mode") :])
    assert args["enable_dp_attention"] is True and args["device"] == {"type": "cuda", "index": 0}
    assert args["cuda_graph_bs"] == [1, 2, 4, 8] and args["chat_template"] == "a, tp_size=99, b"


@pytest.mark.parametrize(
    "end",
    ["speculative_algorithm='EA", "disable_cuda_graph=Fal", "chunked_prefill_size=81", "tp_size=1"],
)
def test_piece_cut_at_its_end_nulls_the_last_item(end: str) -> None:
    piece = CALL[CALL.index("l-A', tokenizer_mode") : CALL.index(end) + len(end)]
    args = args_of(piece)
    assert args[end.split("=")[0]] is None


def test_dict_piece_cut_at_both_ends() -> None:
    piece = (
        "e': 'fa3', 'nsa_prefill_backend': 'flashmla_sparse', 'speculative_algorithm': None, "
        "'tp_size': 4, 'dp_size': 2, 'enable_dp_attention': True, 'mem_fraction_static': 0.8, "
        "'cuda_graph_config': {'decode': {'backend': 'full', 'max_bs': 64}}, 'page_size': 6"
    )
    assert args_of(piece) == {
        "nsa_prefill_backend": "flashmla_sparse",
        "speculative_algorithm": None,
        "tp_size": 4,
        "dp_size": 2,
        "enable_dp_attention": True,
        "mem_fraction_static": 0.8,
        "cuda_graph_config": {"decode": {"backend": "full", "max_bs": 64}},
        "page_size": None,
    }


def test_piece_with_transport_prefixes_on_every_wrapped_line() -> None:
    text = (
        "(SGLangEngine pid=7) [2026-01-01 12:00:00] Load weight end.\n"
        "(SGLangEngine pid=7) l_path='m', tp_size=2, dp_size=1, attention_backend='tri\n"
        "(SGLangEngine pid=7) ton', disable_cuda_graph=False, mem_fraction_static=0.5, ch\n"
        "(SGLangEngine pid=7) [2026-01-01 12:00:01] Init torch distributed begin.\n"
    )
    assert parse_log(text).server_args == {
        "tp_size": 2,
        "dp_size": 1,
        "attention_backend": "triton",
        "disable_cuda_graph": False,
        "mem_fraction_static": 0.5,
    }


@pytest.mark.parametrize("number", ["042", "046"])
def test_real_dump_cut_at_both_ends_anywhere_gives_whole_values_or_null(number: str) -> None:
    text = real_log(number).read_text()
    full = parse_log(text).server_args
    line = next(line for line in text.splitlines() if "server_args=" in line)
    body = line[line.index("(") + 1 :]
    rng = random.Random(int(number))
    read = 0
    for _ in range(150):
        start = rng.randint(1, len(body) - 2)
        end = rng.randint(start + 1, len(body))
        args = args_of(body[start:end]) or {}
        read += len(args)
        for key, value in args.items():
            assert key in full and (value is None or value == full[key]), (start, end, key)
    assert read > 150 * 40  # pieces are read, not only never misread


def test_hard_wrapped_dump_without_its_first_lines_reads_like_the_dump() -> None:
    text = real_log("046").read_text()
    full = parse_log(text).server_args
    line = next(line for line in text.splitlines() if "server_args=" in line)
    rng = random.Random(46)
    for width in (60, 80, 120, 200):
        rows = [line[i : i + width] for i in range(0, len(line), width)]
        first = rng.randint(1, len(rows) // 2)
        args = args_of("\n".join(rows[first:]))
        assert args is not None and len(args) > 0.4 * len(full)
        last = list(args)[-1]
        assert args[last] == full[last]  # the dump's `)` is there: its last item is whole
        for key, value in args.items():
            assert value is None or value == full[key], (width, key)


def test_dict_dump_pieces_of_fixture_14() -> None:
    text = (FIXTURES / "14-server-args-0523-dict-nested.log").read_text()
    full = parse_log(text).server_args
    line = next(line for line in text.splitlines() if "server_args=" in line)
    body = line[line.index("{") + 1 :]
    for start in range(1, len(body) - 40, 37):
        for key, value in (args_of(body[start:]) or {}).items():
            assert value is None or value == full[key], (start, key)


@pytest.mark.parametrize(
    "line",
    [
        # TP0's memory line without its stamp: ServerArgs names, and not a dump
        "max_total_num_tokens=500000, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        "max_running_requests=48, context_len=131072, available_gpu_mem=18.40 GB",
        # bench_serving's arguments (as printed, and cut at the start) share host, port, model...
        "Namespace(backend='sglang', host='0.0.0.0', port=30000, dataset_name='random', "
        "num_prompts=10, request_rate=inf, max_concurrency=4, seed=1, tp_size=1)",
        "ckend='engine', dataset_name='sharegpt', num_prompts=1000, model_path='m', tp_size=1, "
        "dp_size=1, mem_fraction_static=0.88, attention_backend='fa3', disable_cuda_graph=False",
        # another repr that holds server fields: its opener is printed
        "EngineConfig(model_path='m', tp_size=2, dp_size=1, attention_backend='fa3', "
        "mem_fraction_static=0.8, page_size=16)",
        "args = {'model_path': 'm', 'tp_size': 2, 'dp_size': 1, 'attention_backend': 'fa3', "
        "'mem_fraction_static': 0.8}",
        # source code passing keyword arguments (variables, not reprs)
        "    engine = Engine(model_path=path, tp_size=tp, dp_size=dp, attention_backend=backend, "
        "mem_fraction_static=frac, page_size=page)",
        "model_path=path, tp_size=tp, dp_size=dp, attention_backend=backend, page_size=size, x=1",
        # JSON (server_info over HTTP) and too few items
        '{"model_path": "m", "tp_size": 2, "dp_size": 1, "attention_backend": "fa3"}',
        "tp_size=2, dp_size=1, attention_backend='fa3'",
        "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=10.00 GB",
    ],
)
def test_ordinary_lines_are_not_pieces(line: str) -> None:
    assert args_of(line) is None
    assert parse_log(line).server_args is None


def test_a_dump_wins_over_a_piece_even_cut_and_later() -> None:
    piece = CALL[CALL.index("l-A', tokenizer_mode") :]
    cut_dump = f"{STAMP}server_args=ServerArgs(model_path='dump/Model', tp_size=4, dp_s"
    assert parse_log(f"{piece}\n{cut_dump}\n").server_args == {
        "model_path": "dump/Model",
        "tp_size": 4,
    }
    assert parse_log(f"{cut_dump}\n{STAMP}x\n{piece}\n").server_args == {
        "model_path": "dump/Model",
        "tp_size": 4,
    }


def test_the_first_piece_wins() -> None:
    first = CALL[CALL.index("l-A', tokenizer_mode") : CALL.index("moe_dp_size")]
    second = CALL[CALL.index("tp_size=16") :]
    args = parse_log(f"{first}\n{STAMP}x\n{second}\n").server_args
    assert args is not None and "tokenizer_mode" in args and "attention_backend" not in args


@pytest.mark.parametrize(
    "text",
    [
        "a=1, " * 300_000,
        "'a': 1, " * 200_000,
        "tp_size=1, dp_size=2, attention_backend='fa3', page_size=1, " * 20_000,
        "\n".join(["x=1, " * 20_000] * 30),
        "\n".join(["x='a, y=1, " * 10_000] * 30),
        "\n".join(["tp_size=1, dp_size=2, attention_backend='fa3', page_size=1, x=y"] * 30_000),
        "\n".join(
            ["1}, 'tp_size': 2}, 'dp_size': 3}, 'page_size': 1}, 'attention_backend': 1}, " * 2_000]
            * 20
        ),
    ],
)
def test_text_full_of_items_stays_fast(text: str) -> None:
    start = time.perf_counter()
    parse_log(text)
    assert time.perf_counter() - start < 3.0
