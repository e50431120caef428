"""Server configurations on real vLLM releases (vllm_cases.toml: the truth for a set of files,
read from each release's source, with how), each with a log in that release's own format.

A log is what the release prints: 0.8.5's `vLLM API server version`, `args: Namespace(...)`,
the V1 engine line with its VllmConfig text, and the attention line its platforms/cuda.py
prints (`Using Flash Attention backend on V1 engine.`, per worker rank behind
`(VllmWorker rank=N pid=P)`); 0.34's `(APIServer pid=P)` lines with `non-default args: {...}`
and `Resolved architecture:` (the target's, then the draft's), the engine core's engine line,
and the attention line in its forced (`Using AttentionBackendEnum.X backend.`) or automatic
(`Using X attention backend out of potential backends: [...]`, the valid ones listed in the
platform's priority order) form. 0.8.5 names no architecture: `--arch` gives it, as a user would.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).with_name("vllm_cases.toml")
NAMESPACE_DEFAULTS = {
    "tensor_parallel_size": 1,
    "pipeline_parallel_size": 1,
    "kv_transfer_config": None,
    "distributed_executor_backend": None,
}
STAMP = "INFO 12-01 10:00:{:02d} [{}] "
# 0.8.5 platforms/cuda.py: the line printed before the class is returned
SPOKEN_085 = {
    "FLASH_ATTN": "Using Flash Attention backend on V1 engine.",
    "FLASHINFER": "Using FlashInfer backend on V1 engine.",
    "FLASHMLA": "Using FlashMLA backend on V1 engine.",
    "TRITON_MLA": "Using Triton MLA backend on V1 engine.",
}
# 0.34 platforms/cuda.py _get_backend_priorities: the backends a real log lists as valid
POTENTIAL_034 = {
    ("h100", False): ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"],
    ("b200", False): ["FLASHINFER", "FLASH_ATTN", "TRITON_ATTN", "FLEX_ATTENTION"],
    ("h200", True): ["FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA"],
}
GPU_SM = {"h100": "9.0", "h200": "9.0", "b200": "10.0"}


@dataclass
class VllmCase:
    release: str
    name: str
    gpu: str
    architectures: list[str]
    attention: str
    args: dict
    truth: dict[str, str]  # file -> "on" / "off"

    @property
    def tp(self) -> int:
        return int(self.args.get("tensor_parallel_size", 1))

    def _speculative(self) -> str:
        spec = self.args.get("speculative_config")
        if not spec:
            return "None"
        spec = json.loads(spec) if isinstance(spec, str) else spec
        return (
            f"SpeculativeConfig(method={spec['method']!r}, model={spec['model']!r}, "
            f"num_spec_tokens={spec['num_speculative_tokens']})"
        )

    def _engine_line(self) -> str:
        model = self.args["model"]
        return (
            f"Initializing a V1 LLM engine (v{self.release}) with config: model={model!r}, "
            f"speculative_config={self._speculative()}, tokenizer={model!r}, "
            "skip_tokenizer_init=False, tokenizer_mode=auto, dtype=torch.bfloat16, "
            f"max_seq_len=32768, tensor_parallel_size={self.tp}, pipeline_parallel_size=1, "
            "quantization=None, enforce_eager=False, kv_cache_dtype=auto, seed=None, "
            f"served_model_name={model}, enable_prefix_caching=True, "
            'compilation_config={"level":3,"use_cudagraph":true}'
        )

    def _attention_line(self) -> str:
        if self.release == "0.8.5":
            return SPOKEN_085[self.attention]
        if "attention_backend" in self.args:
            return f"Using AttentionBackendEnum.{self.attention} backend."
        listed = POTENTIAL_034[(self.gpu, "MLA" in self.attention)]
        shown = ", ".join(f"'{name}'" for name in listed)
        return f"Using {self.attention} attention backend out of potential backends: [{shown}]."

    def log(self) -> str:
        workers = [f"(VllmWorker rank={r} pid={200 + r}) " for r in range(self.tp)]
        if self.release == "0.8.5":
            # a Namespace prints every argument: the ones the rules read, at their defaults
            shown = {"host": None, **NAMESPACE_DEFAULTS, **self.args}
            args = ", ".join(f"{k}={v!r}" for k, v in shown.items())
            rows = [
                STAMP.format(1, "api_server.py:1043") + f"vLLM API server version {self.release}",
                STAMP.format(1, "api_server.py:1044") + f"args: Namespace({args})",
                STAMP.format(5, "core.py:58") + self._engine_line(),
            ]
            if self.tp == 1:
                workers = [""]
        else:
            api, core = "(APIServer pid=11) ", "(EngineCore_DP0 pid=12) "
            given = {"model_tag" if k == "model" else k: v for k, v in self.args.items()}
            rows = [
                api + STAMP.format(1, "utils.py:253") + f"non-default args: {given!r}",
                *(
                    api + STAMP.format(2, "model.py:761") + f"Resolved architecture: {arch}"
                    for arch in self.architectures
                ),
                core + STAMP.format(5, "core.py:152") + self._engine_line(),
            ]
            workers = [f"(Worker_TP{r} pid={300 + r}) " for r in range(self.tp)]
        rows += [w + STAMP.format(9, "cuda.py:362") + self._attention_line() for w in workers]
        return "\n".join(rows) + "\n"


def vllm_cases() -> list[VllmCase]:
    data = tomllib.loads(DATA.read_text())
    found = []
    for raw in data["case"]:
        on, off = set(raw["on"]), set(raw["off"])
        assert not on & off, sorted(on & off)
        found.append(
            VllmCase(
                release=raw["release"],
                name=raw["name"],
                gpu=raw["gpu"],
                architectures=raw["architectures"],
                attention=raw["attention"],
                args=raw["args"],
                truth={**{f: "on" for f in on}, **{f: "off" for f in off}},
            )
        )
    return found
