"""Container runtime logs (tools.sglang.log_docker): docker json-file and CRI lines read like the
log they wrap, with the file's own line numbers."""

from __future__ import annotations

import json
import random

import pytest

from tests.sglang.support import FIXTURES, real_log
from tools.sglang.log import parse_log
from tools.sglang.log_docker import Wrapped, unwrap

TIME = "2026-03-02T08:00:00.123456789Z"


def docker(message: str, time: str = TIME, stream: str = "stderr") -> str:
    return json.dumps({"log": message, "stream": stream, "time": time}, separators=(",", ":"))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (docker("[t] a\n"), Wrapped("[t] a", TIME, True)),
        (docker("part of a long line"), Wrapped("part of a long line", TIME, False)),
        (docker("\u001b[32mgreen\u001b[0m\n"), Wrapped("\x1b[32mgreen\x1b[0m", TIME, True)),
        ('{"stream":"stdout","time":"t","log":"any order\\n"}', Wrapped("any order", "t", True)),
        ('{"log":"cut at an escape \\u00', Wrapped("cut at an escape ", None, True)),
        (
            '{"log":"cut after the message\\n","stream":"std',
            Wrapped("cut after the message", None, True),
        ),
        (f"{TIME} stderr F [t] whole", Wrapped("[t] whole", TIME, True)),
        (f"{TIME} stdout P [t] part", Wrapped("[t] part", TIME, False)),
        ('{"backend": "sglang", "completed": 3}', None),  # JSON, but no container's
        ('{"log": 5, "stream": "stderr"}', None),
        ("[2026-03-02 08:00:00] plain", None),
        (f"{TIME} [2026-03-02 08:00:00] docker logs -t", None),
    ],
)
def test_unwrap(line: str, expected: Wrapped | None) -> None:
    assert unwrap(line) == expected


def records(data: dict) -> dict:
    """A parse without what a wrapper may change: the time of a line SGLang gave none."""
    for part in ("decode", "prefill"):
        for record in data[part]:
            if record["time"] and "T" in record["time"]:
                record["time"] = None
    return data


@pytest.mark.parametrize(
    "name",
    [
        "01-decode-0523-comma-spec-tp1.log",
        "12-truncated-batch-lines.log",
        "14-server-args-0523-dict-nested.log",
        "15-server-args-old-hard-wrapped.log",
        "23-bench-serving-modern.log",
        "29-traceback-py311-carets-chained.log",
        "30-multi-rank-interleaved-tracebacks.log",
        "31-nccl-errors.log",
        "32-cuda-oom-and-error-lines.log",
        "34-full-session-0523.log",
        "40-server-args-soft-wrapped-decoys-first.log",
        "46-server-args-fragment-call-cut-both-ends.log",
        "55-bench-tail-itl-then-namespace.log",
    ],
)
@pytest.mark.parametrize("wrap", ["docker", "cri"])
def test_wrapped_log_reads_like_the_log(name: str, wrap: str) -> None:
    text = (FIXTURES / name).read_text()
    lines = text.split("\n")
    if wrap == "docker":
        wrapped = "\n".join(docker(line + "\n") for line in lines)
    else:
        wrapped = "\n".join(f"{TIME} stderr F {line}" for line in lines)
    plain = parse_log(text).to_json_dict()
    assert records(parse_log(wrapped).to_json_dict()) == records(plain)


def test_real_log_in_docker_records_split_anywhere() -> None:
    # docker cuts a line over 16 KB into parts; wherever the cuts fall, the line is the same.
    text = real_log("042").read_text()
    plain = parse_log(text).to_json_dict()
    rng = random.Random(42)
    out = []
    for line in text.split("\n"):
        cuts = sorted(rng.sample(range(1, len(line)), k=min(3, len(line) - 1))) if line else []
        parts = [line[a:b] for a, b in zip([0, *cuts], [*cuts, len(line)], strict=True)]
        out += [docker(part) for part in parts[:-1]] + [docker(parts[-1] + "\n")]
    wrapped = parse_log("\n".join(out)).to_json_dict()
    assert wrapped["server_args"] == plain["server_args"]
    assert [(e["kind"], e["message"]) for e in wrapped["errors"]] == [
        (e["kind"], e["message"]) for e in plain["errors"]
    ]


def test_line_numbers_are_the_files_and_times_dockers_when_sglang_gave_none() -> None:
    text = "\n".join(
        [
            "not json at all",
            docker(
                "Decode batch, #running-req: 1, #token: 9, token usage: 0.00, cuda graph: True, "
            ),
            docker("gen throughput (token/s): 5.00, #queue-req: 0\n", time="later"),
            docker("\rprogress 1\rprogress 2\n"),
            docker(
                "[2026-03-02 08:00:01 TP1] Decode batch, #running-req: 2, #token: 9, token usage:"
                " 0.00, cuda graph: True, gen throughput (token/s): 6.00, #queue-req: 0\n"
            ),
        ]
    )
    decode = parse_log(text).to_json_dict()["decode"]
    assert [(r["line"], r["time"], r["gen_throughput"], r["tp_rank"]) for r in decode] == [
        (2, TIME, 5.0, None),
        (5, "2026-03-02 08:00:01", 6.0, 1),
    ]


def test_traceback_in_records_with_a_plain_line_between() -> None:
    text = "\n".join(
        [
            docker(
                "[2026-03-02 08:00:00 TP0] Scheduler hit an exception: Traceback (most recent "
                "call last):\n"
            ),
            docker('  File "x.py", line 1, in f\n'),
            docker("    f()\n"),
            docker("RuntimeError: NCCL error: unhandled cuda error\n"),
            docker("\n"),
            docker("[2026-03-02 08:00:01] Received sigquit from a child process.\n"),
        ]
    )
    assert [(e.line, e.kind, e.message) for e in parse_log(text).errors] == [
        (1, "traceback", "RuntimeError: NCCL error: unhandled cuda error"),
        (6, "error", "Received sigquit from a child process."),
    ]


@pytest.mark.parametrize(
    "name",
    [
        "57-docker-json-file-session.log",
        "58-docker-json-progress-crlf-split-cut.log",
        "59-cri-containerd-partial-lines.log",
    ],
)
def test_random_cuts_of_container_logs_never_raise(name: str) -> None:
    text = (FIXTURES / name).read_text()
    rng = random.Random(len(text))
    for _ in range(40):
        start, end = sorted(rng.randint(0, len(text)) for _ in range(2))
        data = parse_log(text[start:end]).to_json_dict()
        json.dumps(data, allow_nan=False)
        for record in data["decode"]:  # a value is whole or null, even in a cut record
            assert record["gen_throughput"] in (
                None,
                88.41,
                160.05,
                300.5,
                310.25,
                41.27,
                240.33,
                241.09,
            )
