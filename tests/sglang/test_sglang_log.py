"""The contract of tools.sglang.log: the JSON shape, and a result (fast) for any input at all."""

from __future__ import annotations

import io
import json
import random
import time
from pathlib import Path

import pytest

from tests.sglang.support import (
    BENCH_KEYS,
    DECODE_KEYS,
    FIXTURES,
    PREFILL_KEYS,
    TOP_KEYS,
    real_log,
)
from tools.sglang.log import LogParse, parse_log, parse_log_file

DECODE = (
    "[2026-01-01 12:00:00 DP0 TP0 EP0] Decode batch, #running-req: 12, #token: 62531, "
    "token usage: 0.12, accept len: 2.17, accept rate: 0.54, cuda graph: True, "
    "gen throughput (token/s): 178.86, #queue-req: 0"
)
WHOLE_DECODE = {
    "running_req": 12,
    "token": 62531,
    "token_usage": 0.12,
    "accept_len": 2.17,
    "accept_rate": 0.54,
    "cuda_graph": True,
    "gen_throughput": 178.86,
    "queue_req": 0,
}


def well_formed(result: LogParse) -> dict:
    """The JSON object, checked for the schema's keys and for strict JSON (no NaN/Infinity)."""
    data = result.to_json_dict()
    assert set(data) == TOP_KEYS
    for record in data["decode"]:
        assert set(record) >= DECODE_KEYS
    for record in data["prefill"]:
        assert set(record) >= PREFILL_KEYS
    for record in data["errors"]:
        assert set(record) == {"line", "kind", "message"}
        assert record["kind"] in {"traceback", "nccl", "oom", "error"}
        assert isinstance(record["line"], int) and isinstance(record["message"], str)
    assert data["bench"] is None or set(data["bench"]) == BENCH_KEYS
    assert data["server_args"] is None or isinstance(data["server_args"], dict)
    json.dumps(data, allow_nan=False)
    return data


def test_empty_input_gives_every_key() -> None:
    assert well_formed(parse_log("")) == {
        "server": None,  # parse_log is SGLang's reader alone: tools.server_log names the server
        "server_args": None,
        "decode": [],
        "prefill": [],
        "bench": None,
        "errors": [],
    }


def test_decode_record_has_listed_keys_and_typed_values() -> None:
    record = well_formed(parse_log(DECODE))["decode"][0]
    assert record == {
        **WHOLE_DECODE,
        "time": "2026-01-01 12:00:00",
        "tp_rank": 0,
        "dp_rank": 0,
        "ep_rank": 0,
        "line": 1,
    }
    assert type(record["gen_throughput"]) is float and type(record["queue_req"]) is int


def test_lines_are_counted_like_universal_newlines() -> None:
    text = "a\r\nb\rc\n" + DECODE + "\r\n" + DECODE.replace("12:00:00", "12:00:01")
    lines = [r["line"] for r in parse_log(text).to_json_dict()["decode"]]
    assert lines == [4, 5]
    # The same count as Python's own universal-newline reading of the text.
    read = io.TextIOWrapper(io.BytesIO(text.encode()), newline=None).read().split("\n")
    assert [i + 1 for i, line in enumerate(read) if "Decode batch" in line] == lines


def test_byte_order_mark_is_not_part_of_the_first_line() -> None:
    text = "\ufeffTraceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'k'\n"
    assert well_formed(parse_log(text))["errors"] == [
        {"line": 1, "kind": "traceback", "message": "KeyError: 'k'"}
    ]


def test_parse_log_file_reads_binary_without_raising() -> None:
    path = FIXTURES / "37-garbage-binary.bin"
    data = well_formed(parse_log_file(path))
    text = (
        io.TextIOWrapper(
            io.BytesIO(path.read_bytes()), encoding="utf-8", errors="replace", newline=None
        )
        .read()
        .split("\n")
    )
    expected_line = next(i + 1 for i, line in enumerate(text) if "Decode batch" in line)
    assert [(r["line"], r["gen_throughput"]) for r in data["decode"]] == [(expected_line, 10.0)]
    assert data["server_args"] is None


def test_parse_log_file_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        parse_log_file(tmp_path / "absent.log")


def test_every_cut_of_a_decode_line_gives_whole_values_or_null() -> None:
    # Wherever a line is cut, a value is either the one printed in full or null.
    for cut in range(len(DECODE) + 1):
        for record in parse_log(DECODE[:cut]).to_json_dict()["decode"]:
            for key, whole in WHOLE_DECODE.items():
                got = record[key]
                if key == "queue_req" and got is not None:
                    continue  # `#queue-req: 0` is a whole line's last value: it cannot be cut
                assert got is None or got == whole, (cut, key, got)


def test_decode_line_cut_after_a_complete_value_keeps_it() -> None:
    cut = DECODE[: DECODE.index(", #queue-req")]
    record = parse_log(cut).to_json_dict()["decode"][0]
    assert record["gen_throughput"] == 178.86 and record["queue_req"] is None


@pytest.mark.parametrize(
    "line",
    [
        "x" * 3_000_000,
        " " * 2_000_000 + "x",
        "(" * 500_000,
        "'" * 500_000,
        "[2026-01-01 12:00:00] server_args=ServerArgs(" + "(" * 300_000,
        "[2026-01-01 12:00:00] server_args={" + "'a': [" * 100_000,
        "Decode batch, " + "#running-req: 1, " * 100_000,
        "Decode batch, " + "a" * 2_000_000 + ": 1",
        "Traceback (most recent call last):" + " " * 1_000_000,
        "============ Serving Benchmark Result ============" + "=" * 1_000_000,
        "{" * 200_000,
        "[" + "TP0 " * 500_000 + "]",
    ],
)
def test_pathological_lines_stay_fast(line: str) -> None:
    start = time.perf_counter()
    well_formed(parse_log(line + "\n" + DECODE + "\n" + line))
    assert time.perf_counter() - start < 3.0


def test_long_line_is_capped_but_the_rest_is_read() -> None:
    data = well_formed(parse_log("z" * 5_000_000 + "\n" + DECODE))
    assert [r["line"] for r in data["decode"]] == [2]


def test_random_bytes_never_raise() -> None:
    rng = random.Random(20260101)
    for _ in range(300):
        size = rng.choice([0, 1, 7, 100, 2000])
        raw = bytes(rng.getrandbits(8) for _ in range(size))
        well_formed(parse_log(raw.decode("utf-8", errors="replace")))


def test_random_fragments_of_sglang_text_never_raise() -> None:
    # Shuffled and cut pieces of real and fixture logs: the markers are there, the order is not.
    corpus = "".join(p.read_text(errors="replace") for p in sorted(FIXTURES.glob("*.log")))
    pieces = corpus.split("\n")
    rng = random.Random(7)
    for _ in range(200):
        chosen = rng.sample(pieces, k=min(len(pieces), rng.randint(1, 40)))
        text = "\n".join(p[: rng.randint(0, len(p))] if rng.random() < 0.5 else p for p in chosen)
        well_formed(parse_log(text))


@pytest.mark.parametrize("number", ["034", "042", "043", "046"])
def test_random_truncations_of_real_logs_never_raise(number: str) -> None:
    text = real_log(number).read_text(errors="replace")
    rng = random.Random(int(number))
    for _ in range(60):
        start, end = sorted(rng.randint(0, len(text)) for _ in range(2))
        well_formed(parse_log(text[start:end]))
        well_formed(parse_log(text[:end]))


def test_a_big_log_parses_in_seconds() -> None:
    # 5 MB here keeps the suite fast; the 50 MB case is ten times this, linear.
    chunk = (
        "\n".join(
            [DECODE] * 50
            + ['[2026-01-01 12:00:00] INFO:     127.0.0.1:1 - "POST /generate HTTP/1.1" 200 OK']
            * 50
        )
        + "\n"
    )
    text = chunk * (5_000_000 // len(chunk))
    start = time.perf_counter()
    result = parse_log(text)
    assert time.perf_counter() - start < 5.0
    assert len(result.decode) == text.count("Decode batch")


def test_non_string_input_does_not_raise() -> None:
    well_formed(parse_log(None))  # type: ignore[arg-type]
