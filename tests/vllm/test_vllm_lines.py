"""vLLM's line forms one by one: the attention lines' five forms and their look-alikes, the
arguments (a `<class>` value, a line cut short), the spec-decode acceptance length's two
definitions, and telling a vLLM log from an SGLang one."""

from __future__ import annotations

import pytest

from tools.server_facts import server_of, server_of_command
from tools.server_log import parse_server_log
from tools.vllm.args import engine_config, namespace_args, non_default_args
from tools.vllm.attention import attention_line
from tools.vllm.metrics import WITH_BONUS, WITHOUT_BONUS, spec_decode_record


@pytest.mark.parametrize(
    ("message", "backend", "engine"),
    [
        ("Using Flash Attention backend on V1 engine.", "FLASH_ATTN", "V1"),
        (
            "Using FlashInfer backend on V1 engine by default for Blackwell (SM 10.0) GPUs.",
            "FLASHINFER",
            "V1",
        ),
        ("Using XFormers backend.", "XFORMERS", None),
        (
            "Using FLASH_ATTN attention backend out of potential backends: ['FLASH_ATTN', "
            "'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION'].",
            "FLASH_ATTN",
            None,
        ),
        ("Using AttentionBackendEnum.FLASHINFER backend.", "FLASHINFER", None),
        (
            "Some backends are not compatible. Overriding with TRITON_ATTN out of potential "
            "backends: ['TRITON_ATTN']",
            "TRITON_ATTN",
            None,
        ),
    ],
)
def test_the_attention_line_forms(message: str, backend: str, engine: str | None) -> None:
    found = attention_line(7, "Worker_TP0", message)
    assert found is not None and found.kind == "decoder"
    assert (found.backend, found.engine) == (backend, engine)


@pytest.mark.parametrize(
    "message",
    [
        "Using FlashInfer for top-p & top-k sampling.",
        "Forcing kv cache block size to 64 for FlashMLA backend.",
        "Using 'VLLM_CUTLASS' NvFp4 MoE backend out of potential backends: ['VLLM_CUTLASS']",
        "Using Transformers modeling backend.",
        "Using [NCCL_SYMM_MEM, PYNCCL] all-reduce backends (in dispatch order) for group 'tp'",
    ],
)
def test_lines_that_name_no_decoder_backend(message: str) -> None:
    found = attention_line(1, "", message)
    assert found is None or found.kind != "decoder"


def test_the_mla_prefill_line_is_not_the_decoder() -> None:
    found = attention_line(1, "", "Using FLASHINFER MLA prefill backend.")
    assert found is not None and found.kind == "mla_prefill"


def test_arguments_as_python_reprs() -> None:
    args = namespace_args(
        "args: Namespace(model='m', tensor_parallel_size=2, func=<function serve at 0x7f>)"
    )
    assert args == {"model": "m", "tensor_parallel_size": 2, "func": "<function serve at 0x7f>"}
    cut = non_default_args("non-default args: {'model': 'm', 'max_model_len': 4096, 'port': 80")
    assert cut == {"model": "m", "max_model_len": 4096, "port": None}  # 80 may be 8000


def test_the_engine_config_values_as_printed() -> None:
    config = engine_config(
        "model='m', speculative_config=SpeculativeConfig(method='eagle3', model='d', "
        "num_spec_tokens=3), dtype=torch.bfloat16, quantization=compressed-tensors, "
        'max_seq_len=40960, compilation_config={"level":3,"use_cudagraph":true}'
    )
    assert config["speculative_config"] == {"method": "eagle3", "model": "d", "num_spec_tokens": 3}
    assert config["dtype"] == "torch.bfloat16"
    assert config["quantization"] == "compressed-tensors"
    assert config["compilation_config"] == {"level": 3, "use_cudagraph": True}
    assert engine_config("model='m', max_seq_len=409") == {"model": "m", "max_seq_len": None}


def test_the_acceptance_length_definition_is_told() -> None:
    old = spec_decode_record(
        1,
        "SpecDecoding metrics: Draft acceptance rate: 60.0%, Mean acceptance length: 1.80, "
        "Accepted: 180 tokens, Drafted: 300 tokens",
        3,
        "0.8.5",
    )
    assert old is not None and old.definition == WITHOUT_BONUS
    new = spec_decode_record(
        1,
        "SpecDecoding metrics: Mean acceptance length: 2.80, Accepted throughput: 4.37 "
        "tokens/s, Drafted throughput: 7.3 tokens/s, Accepted: 180 tokens, Drafted: 300 "
        "tokens, Avg Draft acceptance rate: 60.0%",
        3,
        None,
    )
    assert new is not None and new.definition == WITH_BONUS
    by_version = spec_decode_record(
        1, "SpecDecoding metrics: Mean acceptance length: 2.1", None, "0.8.5"
    )
    assert by_version is not None and by_version.definition == WITHOUT_BONUS
    unknown = spec_decode_record(1, "SpecDecoding metrics: Mean acceptance length: 2.1", None, None)
    assert unknown is not None and unknown.definition is None


def test_the_server_is_told_by_its_lines_and_its_command() -> None:
    assert (
        server_of("INFO 05-01 10:00:00 [api_server.py:1043] vLLM API server version 0.8.5")
        == "vllm"
    )
    assert server_of("[2026-01-01 10:00:00] server_args=ServerArgs(model_path='m')") == "sglang"
    assert server_of("hello\nworld") is None
    assert server_of_command(["vllm", "serve", "m"]) == "vllm"
    assert server_of_command(["python", "-m", "vllm.entrypoints.openai.api_server"]) == "vllm"
    assert (
        server_of_command(["python3", "-m", "sglang.launch_server", "--model-path", "m"])
        == "sglang"
    )
    assert server_of_command(["./serve.sh"]) is None


def test_a_log_of_no_known_server_names_none() -> None:
    """A command bench's output (the real bundles' `latency_ms:` lines) is no SGLang log: the
    transcript says nothing of a server (it once opened with "server: sglang")."""
    bench = "latency_ms: 14.7\nlatency_ms: 14.3\nlatency_ms: 14.6\n"
    assert parse_server_log(bench).server is None
    assert parse_server_log(bench, "sglang").server is not None  # told: SGLang's, if empty
    dump = "[2026-01-01 10:00:00] server_args=ServerArgs(model_path='m', attention_backend='fa3')"
    facts = parse_server_log(dump).server
    assert facts is not None and facts.server == "sglang" and facts.attention == ["fa3"]
