"""Hostile input to the vLLM reader: random bytes, every prefix of the real fixtures, huge and
unbalanced lines, and lines cut inside a value never raise, and a value cut short is unknown."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tools.server_log import parse_server_log
from tools.vllm.log import parse_vllm_log

FIXTURES = sorted((Path(__file__).parents[1] / "fixtures" / "vllm_logs").glob("*.log"))


def test_random_bytes_never_raise() -> None:
    rng = random.Random(7)
    for _ in range(40):
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 3000)))
        parse_vllm_log(raw.decode("utf-8", "replace"))


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name[:2])
def test_prefixes_of_real_logs_never_raise(fixture: Path) -> None:
    text = fixture.read_text()
    rng = random.Random(fixture.name)
    for cut in sorted(rng.sample(range(len(text)), min(25, len(text)))):
        parsed = parse_server_log(text[:cut], "vllm")
        assert parsed.server is not None and parsed.server.server == "vllm"


@pytest.mark.parametrize(
    "line",
    [
        "args: Namespace(" + "a=(" * 5000,
        "non-default args: {" + "'k': [" * 5000,
        "Initializing a V1 LLM engine (v0.9.0) with config: " + "x=" * 100000,
        "(VllmWorker rank=1 pid=2) " * 2000 + "INFO 01-01 00:00:00 [a.py:1] hi",
        "SpecDecoding metrics: Mean acceptance length: 1e309, Accepted: 9999999999999999 tokens",
        "Using " + "X" * 100000 + " attention backend out of potential backends: [" + "'A'," * 9999,
        "GPU KV cache size: " + "9," * 50000 + " tokens",
        "x" * 80000 + " is not supported by the V1 Engine. Falling back to V0",
        "Using Flash Attention backend " * 6000 + "by default x" * 2000,
    ],
)
def test_pathological_lines_never_raise(line: str) -> None:
    parse_vllm_log(line + "\n" + line[:1000])


def test_a_value_cut_short_is_unknown() -> None:
    parsed = parse_vllm_log(
        "INFO 01-01 00:00:00 [api_server.py:1] args: Namespace(model='m', "
        "tensor_parallel_size=8, max_model_len=40"
    )
    assert parsed.server_args == {"model": "m", "tensor_parallel_size": 8, "max_model_len": None}


def test_a_number_at_the_end_of_a_cut_line_is_unknown() -> None:
    parsed = parse_vllm_log(
        "INFO 01-01 00:00:00 [metrics.py:1] SpecDecoding metrics: Draft acceptance rate: 60.0%, "
        "Mean acceptance length: 1.7"
    )
    assert parsed.server is not None
    (record,) = parsed.server.details["spec_decode"]
    assert record["acceptance_rate"] == 60.0 and record["mean_acceptance_length"] is None


def test_the_last_line_of_a_cut_log_gives_no_values() -> None:
    head = "INFO 01-01 00:00:00 [api_server.py:1] "
    cut = parse_vllm_log(head + "vLLM API server version 0.8")
    assert cut.server is not None and cut.server.version is None
    whole = parse_vllm_log(head + "vLLM API server version 0.8.5\n")
    assert whole.server is not None and whole.server.version == "0.8.5"
    arch = parse_vllm_log(head + "Resolved architecture: Qwen3For")
    assert arch.server is not None and arch.server.architectures == []
    engine = parse_vllm_log(
        head
        + "Initializing a V0 LLM engine (v0.8.5) with config: model='m', use_cached_outputs=Tru"
    )
    assert engine.server is not None
    assert engine.server.details["startup"]["config"] == {"model": "m", "use_cached_outputs": None}
