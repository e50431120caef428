"""Real vLLM log lines from vLLM's issues and pull requests (tests/fixtures/vllm_logs/, each
with its source in SOURCES.toml): every field the excerpt shows is read, in each release's own
format (0.8's `VllmWorker rank=N` and Namespace, 0.10+'s process prefixes and non-default args,
V0 and V1 engines, Ray workers, the old and new spec-decode lines, bench blocks)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from tools.server_log import parse_server_log_file
from tools.sglang.log import LogParse
from tools.vllm.attention import SPOKEN

FIXTURES = Path(__file__).parents[1] / "fixtures" / "vllm_logs"
SOURCES = tomllib.loads((FIXTURES / "SOURCES.toml").read_text())


def _arg(parse: LogParse, *names: str) -> Any:
    """An argument as the args line or the engine config shows it."""
    server = parse.server
    assert server is not None
    config = server.details["startup"]["config"] or {}
    for source in (config, server.args or {}):  # what the engine resolved first
        for name in names:
            if source.get(name) is not None:
                return source[name]
    return None


def _read(parse: LogParse, key: str) -> Any:
    if key.startswith("bench_"):  # bench output alone names no server
        return getattr(parse.bench, key.removeprefix("bench_"), None) if parse.bench else None
    server = parse.server
    assert server is not None and server.server == "vllm"
    startup = server.details["startup"]
    spec = server.speculative
    spec_lines = server.details["spec_decode"]
    readers = {
        "version": lambda: server.version,
        "engine": lambda: startup["engine"],
        "model": lambda: _arg(parse, "model", "model_tag"),
        "tensor_parallel_size": lambda: _arg(parse, "tensor_parallel_size"),
        "dtype": lambda: _arg(parse, "dtype"),
        "quantization": lambda: _arg(parse, "quantization"),
        "attention": lambda: server.attention,
        "architectures": lambda: server.architectures,
        "spec_method": lambda: spec.method if spec else None,
        "num_spec_tokens": lambda: spec.num_tokens if spec else None,
        "mean_acceptance_length": lambda: spec_lines[0]["mean_acceptance_length"],
        "processes": lambda: [p for p in startup["processes"]],
        "non_default_args": lambda: server.args,
    }
    return readers[key]() if key in readers else startup[key]


def _expected(key: str, value: Any) -> Any:
    if key == "attention":  # as printed -> the registry's name
        return [SPOKEN.get(v.lower(), v) for v in value]
    return value


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_every_field_the_log_shows_is_read(name: str) -> None:
    parse = parse_server_log_file(FIXTURES / name)
    for key, value in SOURCES[name]["expect"].items():
        found = _read(parse, key)
        if key == "non_default_args":
            assert {k: found.get(k) for k in value} == value, (name, key)
        elif key == "processes":
            assert set(found) == set(value), (name, key, found)
        else:
            assert found == _expected(key, value), (name, key, found)
