"""The lab's SGLang itself: argument resolution per simulated GPU, and clear start-up failures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

RESOLVE = (
    "from sglang.srt.server_args import prepare_server_args as p; "
    "print(p(['--model-path', 'moonshotai/Kimi-K2.5', '--tp', '8']).attention_backend)"
)


@pytest.mark.parametrize(
    ("gpu", "backend"), [("sm120", "triton"), ("sm90", "fa3"), ("sm100", "trtllm_mla")]
)
def test_default_attention_backend_follows_the_gpu(seed_lab: Path, gpu: str, backend: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", RESOLVE],
        cwd=seed_lab,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": "python", "SGLANG_LAB_GPU": gpu},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == backend


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--model-path", "nobody/nothing"], {}, "Unknown model 'nobody/nothing'"),
        (["--model-path", "moonshotai/Kimi-K2.5"], {"SGLANG_LAB_GPU": "sm999"}, "SGLANG_LAB_GPU"),
        (
            ["--model-path", "moonshotai/Kimi-K2.5", "--attention-backend", "fa3"],
            {},
            "requires SM>=90",
        ),
    ],
)
def test_start_up_failures_are_one_clear_line(
    seed_lab: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sglang.launch_server", *args, "--port", "1"],
        cwd=seed_lab,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": "python", **env},
    )
    assert done.returncode == 1
    assert message in done.stderr.splitlines()[-1]
