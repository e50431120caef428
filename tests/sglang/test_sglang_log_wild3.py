"""Fixtures 69 onward: the kinds of miss a held-out set of real logs showed (34 logs that users
posted, collected after the reader was tuned and never used to tune it), each written anew here (no
third-party text): a traceback whose header is gone, pasted with indentation, and bench_serving's
JSON records under the key names it used before its keys took their units.

Expectations are partial (see assert_matches), written from the fixture's text.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sglang.support import FIXTURES, assert_matches
from tools.bench.jsonl import is_serving_record, serving_summary
from tools.sglang.log import parse_log, parse_log_file

NO_BENCH_NO_ARGS: dict[str, Any] = {"bench": None, "server_args": None}


def error(line: int, kind: str, message: str) -> dict[str, Any]:
    return {"line": line, "kind": kind, "message": message}


EXPECTED: dict[str, dict[str, Any]] = {
    # The exception line sits two columns left of its frames, wherever the paste put them: at
    # column 2 under frames at 4, at column 0 under frames at 2 (a bare exception name too), at
    # column 4 in a Markdown list. Lines in between that are no exception lines stay no records.
    "69-traceback-indented-without-header.log": {
        **NO_BENCH_NO_ARGS,
        "prefill": [],
        "decode": [
            {
                "line": 8,
                "time": "2026-03-20 08:00:01",
                "tp_rank": 0,
                "running_req": 3,
                "gen_throughput": 301.25,
            }
        ],
        "errors": [
            error(
                7,
                "error",
                "RuntimeError: Generation failed after 3 retries: server at "
                "10.0.0.7:30000 returned 503",
            ),
            error(13, "error", "KeyboardInterrupt"),
            error(
                18,
                "nccl",
                "torch.distributed.DistBackendError: NCCL error in: "
                "ProcessGroupNCCL.cpp:1970, unhandled cuda error",
            ),
        ],
    },
    # `median_ttft`, `median_itl`, `output_token_throughput`: the same numbers as today's `_ms`
    # and `output_throughput` keys. The first record is the summary; a JSON line of another tool
    # with one such key is none.
    "70-bench-json-legacy-key-names.log": {
        "server_args": None,
        "decode": [],
        "prefill": [],
        "errors": [],
        "bench": {
            "output_throughput": 1510.25,
            "median_ttft_ms": 41.5,
            "median_itl_ms": 9.75,
            "median_tpot_ms": None,
            "request_throughput": None,
            "accept_length": None,
        },
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture(name: str) -> None:
    assert_matches(parse_log_file(FIXTURES / name).to_json_dict(), EXPECTED[name])


@pytest.mark.parametrize(
    "log",
    [
        # source code under a frame, at the frame's own column plus two, is never an exception line
        '  File "/x/a.py", line 1, in f\n    raise ValueError(msg)\n',
        # a line at the exception's column that is no exception line
        '    File "/x/a.py", line 1, in f\n      g()\n  (retrying in 5 s)\n',
        # an exception-shaped line too far below the frames belongs to something else
        '    File "/x/a.py", line 1, in f\n      g()\nx\ny\nz\nw\n  Retry: in 5 s\n',
        # a stamped line is the next log record, not the traceback's end
        '  File "/x/a.py", line 1, in f\n    g()\n[2026-01-01 00:00:00] Note: resumed\n',
    ],
)
def test_lines_near_headerless_frames_that_are_no_exception_lines(log: str) -> None:
    assert parse_log(log).to_json_dict()["errors"] == []


def test_a_line_under_a_frame_is_its_source_code_only_when_indented_further() -> None:
    # faulthandler's frames (`line 3 in f`), pasted indented: the error line below the last one
    # sits at the paste's indentation, left of the frame, and is no source code
    log = (
        '      File "/x/spawn.py", line 120 in spawn_main\n'
        "    Fatal Python error: Segmentation fault\n"
    )
    assert [(e["line"], e["kind"]) for e in parse_log(log).to_json_dict()["errors"]] == [
        (2, "error")
    ]


def test_interleaved_sources_keep_their_own_frames() -> None:
    log = (
        '(Actor pid=1)     File "/x/a.py", line 1, in f\n'
        '(Actor pid=2)   File "/x/b.py", line 2, in g\n'
        "(Actor pid=1)   ValueError: bad input\n"
        "(Actor pid=2) KeyError: 'k'\n"
    )
    assert [(e["line"], e["message"]) for e in parse_log(log).to_json_dict()["errors"]] == [
        (3, "ValueError: bad input"),
        (4, "KeyError: 'k'"),
    ]


def test_legacy_keys_only_stand_in_for_missing_ones() -> None:
    record = {
        "median_ttft": 2.0,
        "median_ttft_ms": 1.0,
        "median_itl": 3.0,
        "output_token_throughput": 4.0,
    }
    assert is_serving_record(record)
    assert serving_summary(record) == {
        "output_throughput": 4.0,
        "median_tpot_ms": None,
        "median_itl_ms": 3.0,
        "median_ttft_ms": 1.0,
        "request_throughput": None,
        "accept_length": None,
    }
    assert not is_serving_record({"output_token_throughput": 4.0, "median_ttft": 2.0})
