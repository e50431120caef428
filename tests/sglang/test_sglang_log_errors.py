"""Error records: tracebacks (chained, interleaved, prefixed), NCCL, OOM, error lines."""

from __future__ import annotations

import pytest

from tools.sglang.log import parse_log
from tools.sglang.log_errors import classify, is_exception_line


def errors(text: str) -> list[tuple[int, str, str]]:
    return [(e.line, e.kind, e.message) for e in parse_log(text).errors]


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("node1:1:2 [0] NCCL WARN Cuda failure 'out of memory'", "nccl"),
        ("RuntimeError: NCCL error in: x.cpp:1, unhandled cuda error", "nccl"),
        ("ncclInternalError: Internal check failed.", "nccl"),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB", "oom"),
        ("RuntimeError: CUDA error: out of memory", "oom"),
        ("HIP out of memory. Tried to allocate 2.00 GiB", "oom"),
        ("ERROR scheduler.py:10: Something broke", "error"),
        ("ERROR:    Exception in ASGI application", "error"),
        ("RuntimeError: CUDA error: an illegal memory access was encountered", "error"),
        ("Scheduler hit an exception: RuntimeError: bad", "error"),
        ("DataParallelController hit an exception: RuntimeError: bad", "error"),
        ("Exception: plain exception", "error"),
        ("[E1023 12:00:00.123 1 ProcessGroup.cpp:1] failed", "error"),
        ("WARNING server_args.py:1: something failed, falling back", None),
        ("/x/y.py:49: UserWarning: Error-prone setting", None),
        ("FutureWarning: RuntimeError will be removed", None),
        ("WARNING: CUDA out of memory might happen", None),
        ("Ignore import error when loading sglang.srt.multimodal.processors.glmasr: no name", None),
        ("Decode out of memory happened. #retracted_reqs: 1", None),
        ('INFO:     127.0.0.1:1 - "POST /generate HTTP/1.1" 500 Internal Server Error', None),
        ("node1:1:2 [0] NCCL INFO Bootstrap : Using eth0", None),
        ("Errors are counted below", None),
    ],
)
def test_classify(line: str, kind: str | None) -> None:
    assert classify(line) == kind


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("RuntimeError: boom", True),
        ("torch.OutOfMemoryError: CUDA out of memory", True),
        ("KeyboardInterrupt", True),
        ("KeyError: 'x'", True),
        ("INFO:aiter:import x", False),
        ('  File "x.py", line 1', False),
        ("[aiter] Registering", False),
        ("Capturing batches (bs=512 avail_mem=2.60 GB):   0%|", False),
    ],
)
def test_is_exception_line(line: str, expected: bool) -> None:
    assert is_exception_line(line) is expected


def test_traceback_followed_by_another_without_chain_marker_gives_two() -> None:
    text = (
        'Traceback (most recent call last):\n  File "a.py", line 1, in f\n    f()\n'
        'RuntimeError: one\nTraceback (most recent call last):\n  File "b.py", line 2\n'
        "    g()\nValueError: two\n"
    )
    assert errors(text) == [
        (1, "traceback", "RuntimeError: one"),
        (5, "traceback", "ValueError: two"),
    ]


def test_direct_cause_chain_is_one_record_with_the_last_exception() -> None:
    text = (
        'Traceback (most recent call last):\n  File "a.py", line 1\n    f()\n'
        "OSError: disk\n\nThe above exception was the direct cause of the following "
        'exception:\n\nTraceback (most recent call last):\n  File "b.py", line 2\n'
        "    g()\nRuntimeError: load failed\n[2026-01-01 12:00:00] next\n"
    )
    assert errors(text) == [(1, "traceback", "RuntimeError: load failed")]


def test_multi_line_exception_message_is_one_record() -> None:
    text = (
        '[rank0]: Traceback (most recent call last):\n[rank0]:   File "a.py", line 1\n'
        "[rank0]:     dist.init()\n[rank0]: torch.distributed.DistBackendError: NCCL error "
        "in: x.cpp:1, unhandled system error\n[rank0]: ncclSystemError: System call failed.\n"
        "[rank0]: Last error:\n[rank0]: socketStartConnect: Connect failed\n"
    )
    assert errors(text) == [
        (
            1,
            "traceback",
            "torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled system error",
        )
    ]


def test_traceback_cut_at_end_keeps_its_header() -> None:
    text = "[2026-01-01 12:00:00 TP3] Scheduler hit an exception: Traceback (most recent call "
    text += "last):"
    assert errors(text) == [
        (1, "traceback", "Scheduler hit an exception: Traceback (most recent call last):")
    ]


def test_interleaved_ray_actors_are_kept_apart() -> None:
    text = (
        "(SGLangEngine pid=1) Traceback (most recent call last):\n"
        "(SGLangEngine pid=2) Traceback (most recent call last):\n"
        '(SGLangEngine pid=2)   File "x.py", line 1\n'
        '(SGLangEngine pid=1)   File "x.py", line 1\n'
        "(SGLangEngine pid=2) ValueError: two\n"
        "(SGLangEngine pid=1) KeyError: 'one'\n"
    )
    assert errors(text) == [
        (1, "traceback", "KeyError: 'one'"),
        (2, "traceback", "ValueError: two"),
    ]


def test_noise_inside_a_traceback_is_skipped() -> None:
    text = (
        "[2026-01-01 12:00:00 TP1] Scheduler hit an exception: Traceback (most recent call "
        'last):\n  File "a.py", line 1\n[aiter] Registering 0 cuda graph addresses\n'
        "[2026-01-01 12:00:00 TP2] Registering 0 cuda graph addresses\n    f()\n"
        "AssertionError\n"
    )
    assert errors(text) == [(1, "traceback", "AssertionError")]


def test_warnings_produce_no_records() -> None:
    text = (
        "[2026-01-01 12:00:00] WARNING model_config.py:1: Transformers version is new.\n"
        "/a/b.py:49: UserWarning: Aiter backend is selected.\n"
        '  warnings.warn("Aiter backend is selected.", UserWarning)\n'
        "[2026-01-01 12:00:00 TP0] WARNING: Custom allreduce failed, error: x\n"
    )
    assert errors(text) == []


def test_error_line_after_a_gap_is_its_own_record() -> None:
    text = (
        'Traceback (most recent call last):\n  File "a.py", line 1\n    f()\n'
        "ValueError: x\n\nRuntimeError: CUDA error: device-side assert triggered\n"
    )
    assert errors(text) == [
        (1, "traceback", "ValueError: x"),
        (6, "error", "RuntimeError: CUDA error: device-side assert triggered"),
    ]
