"""parse_log_file reads a file line by line: the same result as parse_log on its text, with
memory that holds the records found and a few lines, not the file."""

from __future__ import annotations

import io
import json
import random
import tracemalloc
from pathlib import Path

import pytest

from tests.sglang.support import FIXTURES, REAL_LOGS
from tools.sglang.log import parse_log, parse_log_file

ALL_LOGS = sorted(FIXTURES.iterdir()) + sorted(REAL_LOGS.glob("*.log"))
DECODE = (
    "[2026-01-01 12:00:00 TP0] Decode batch, #running-req: 12, #token: 62531, token usage: "
    "0.12, cuda graph: True, gen throughput (token/s): 178.86, #queue-req: 0"
)


def as_text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: p.name[:24])
def test_file_and_text_give_the_same_result(path: Path) -> None:
    text = as_text(path.read_bytes())
    assert parse_log_file(path).to_json_dict() == parse_log(text).to_json_dict()


def test_same_result_whatever_the_bytes_and_where_the_read_chunks_end(tmp_path: Path) -> None:
    # Line ends, a byte-order mark, invalid and multi-byte UTF-8 around the 8 KB chunks that
    # the file is decoded in.
    lines = [line for path in ALL_LOGS[:45] for line in path.read_bytes().splitlines()][:3000]
    rng = random.Random(8192)
    pieces = [b"\r", b"\n", b"\r\n", b"\xff", b"\xe2\x82", b"\xe2\x82\xac", b"\xef\xbb\xbf", b""]
    for n in range(12):
        parts = [b"\xef\xbb\xbf"] if n % 3 == 0 else []
        size = 0
        while size < 40_000:
            part = rng.choice(lines) if rng.random() < 0.7 else rng.choice(pieces)
            if rng.random() < 0.2:
                part = part[: rng.randint(0, len(part))]
            parts.append(part + rng.choice([b"\n", b"\r\n", b"\r", b""]))
            size += len(parts[-1])
        data = b"".join(parts)
        path = tmp_path / f"{n}.log"
        path.write_bytes(data)
        assert parse_log_file(path).to_json_dict() == parse_log(as_text(data)).to_json_dict(), n


def test_lines_longer_than_the_read_chunks(tmp_path: Path) -> None:
    dump = (
        "[2026-01-01 12:00:00] server_args=ServerArgs(model_path='m', "
        + "".join(f"k{i}={i}, " for i in range(20_000))
        + "tp_size=8)"
    )
    text = (
        f"{DECODE}\n{dump}\n{DECODE}\r\n"
        + json.dumps({"completed": 1, "duration": 2.0, "x": "y" * 300_000})
        + "\n"
    )
    path = tmp_path / "long.log"
    path.write_text(text, newline="")
    result = parse_log_file(path)
    assert result.to_json_dict() == parse_log(text).to_json_dict()
    assert result.server_args["tp_size"] == 8 and [r.line for r in result.decode] == [1, 3]


def test_memory_holds_records_and_a_few_lines_not_the_file(tmp_path: Path) -> None:
    noise = '[2026-01-01 12:00:00] INFO:     127.0.0.1:1 - "POST /generate HTTP/1.1" 200 OK\n'
    path = tmp_path / "big.log"
    with path.open("w") as out:
        for _ in range(50):
            out.write(noise * 600 + DECODE + "\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        result = parse_log_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(result.decode) == 50
    assert size > 2_000_000 and peak < size / 8, (size, peak)


def test_write_json_is_json_dumps_of_the_json_dict() -> None:
    def shout(value: object) -> object:  # a transform that works item by item, as masking does
        if isinstance(value, str):
            return value.upper()
        if isinstance(value, dict):
            return {k: shout(v) for k, v in value.items()}
        if isinstance(value, list):
            return [shout(v) for v in value]
        return value

    for path in ALL_LOGS:
        result = parse_log_file(path)
        out = io.StringIO()
        result.write_json(out)
        assert out.getvalue() == json.dumps(result.to_json_dict(), indent=2), path.name
        out = io.StringIO()
        result.write_json(out, transform=shout)
        assert out.getvalue() == json.dumps(shout(result.to_json_dict()), indent=2), path.name
