"""The VLLM_* variables vLLM knows. Only these are copied to Ray workers (0.8's executor)."""

import os

environment_variables = {
    "VLLM_ATTENTION_BACKEND": lambda: os.environ.get("VLLM_ATTENTION_BACKEND"),
    "VLLM_USE_V1": lambda: os.environ.get("VLLM_USE_V1", "1") == "1",
    "VLLM_WORKER_MULTIPROC_METHOD": lambda: os.environ.get("VLLM_WORKER_MULTIPROC_METHOD", "fork"),
    "VLLM_LOGGING_LEVEL": lambda: os.environ.get("VLLM_LOGGING_LEVEL", "INFO"),
    "VLLM_USAGE_SOURCE": lambda: os.environ.get("VLLM_USAGE_SOURCE", "production"),
}


def __getattr__(name: str):
    if name in environment_variables:
        return environment_variables[name]()
    raise AttributeError(name)
