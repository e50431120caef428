"""What `paths` reads of the models and backends a server builds, on small SGLang-shaped trees
(each a real folder of Python files): a negated platform test, a backend changed after the
dump, a draft named by its own config, MLA backends only for MLA architectures."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.conftest import run_cli
from tools.code_paths.serving import args_printer_root

ATTN = "python/sglang/srt/layers/attention/"

MODEL_CONFIG = """
class ModelConfig:
    def _config_draft_model(self):
        if self.is_draft_model and self.hf_config.architectures[0] in ["DeepseekV3ForCausalLM"]:
            self.hf_config.architectures[0] = "DeepseekV3ForCausalLMNextN"

    def _derive(self):
        if (
            "DeepseekV3ForCausalLM" in self.hf_config.architectures
            or "DeepseekV3ForCausalLMNextN" in self.hf_config.architectures
        ):
            self.attention_arch = AttentionArch.MLA
"""

REGISTRY = """
ATTENTION_BACKENDS = {}

def register_attention_backend(name):
    def decorator(fn):
        ATTENTION_BACKENDS[name] = fn
        return fn
    return decorator

@register_attention_backend("flashinfer")
def create_flashinfer_backend(runner):
    if not runner.use_mla_backend:
        from sglang.srt.layers.attention.flashinfer_backend import FlashInferAttnBackend
        return FlashInferAttnBackend(runner)
    else:
        from sglang.srt.layers.attention.flashinfer_mla_backend import FlashInferMLAAttnBackend
        return FlashInferMLAAttnBackend(runner)

@register_attention_backend("triton")
def create_triton_backend(runner):
    from sglang.srt.layers.attention.triton_backend import TritonAttnBackend
    return TritonAttnBackend(runner)

@register_attention_backend("fa3")
def create_fa3_backend(runner):
    from sglang.srt.layers.attention.flashattention_backend import FlashAttentionBackend
    return FlashAttentionBackend(runner)
"""

MODELS = {
    "llama.py": "class LlamaForCausalLM:\n    pass\n",
    "llama_eagle3.py": "from sglang.srt.models.llama import LlamaForCausalLM\n\n"
    "class LlamaForCausalLMEagle3(LlamaForCausalLM):\n    pass\n",
    "deepseek_v2.py": "class DeepseekV3ForCausalLM:\n    pass\n",
    "deepseek_nextn.py": "from sglang.srt.models.deepseek_v2 import DeepseekV3ForCausalLM\n\n"
    "class DeepseekV3ForCausalLMNextN(DeepseekV3ForCausalLM):\n    pass\n",
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for folder in (root / "python" / "sglang").rglob("*"):
        if folder.is_dir() and not (folder / "__init__.py").exists():
            (folder / "__init__.py").write_text("")
    (root / "python" / "sglang" / "__init__.py").write_text("")
    return root


def _registry_tree(root: Path) -> Path:
    files = {
        ATTN + "attention_registry.py": REGISTRY,
        "python/sglang/srt/configs/model_config.py": MODEL_CONFIG,
        "python/sglang/srt/model_executor/model_runner.py": "class ModelRunner:\n    pass\n",
    }
    for backend in ("flashinfer", "flashinfer_mla", "triton", "flashattention"):
        files[ATTN + f"{backend}_backend.py"] = "class Backend:\n    pass\n"
    for name, text in MODELS.items():
        files[f"python/sglang/srt/models/{name}"] = text
    return _tree(root, files)


def _paths(repo: Path, log: str, *files: str, gpu: str | None = None) -> dict[str, dict]:
    (repo / "server.log").write_text(log)
    extra = ["--gpu", gpu] if gpu else []
    done = run_cli(
        "paths", "--log", str(repo / "server.log"), "--repo", str(repo), "--json", *extra, *files
    )
    assert done.returncode == 0, done.stderr
    return {Path(f["path"]).name: f for f in json.loads(done.stdout)["files"]}


def _loaded(*names: str) -> str:
    return "".join(
        f"[2026-01-01 00:00:0{n}] Load weight end. type={name}, dtype=torch.bfloat16\n"
        for n, name in enumerate(names, 1)
    )


def test_a_negated_platform_test_is_decided_from_the_gpu(tmp_path: Path) -> None:
    """`if not _is_hip:` is a platform flag, not a server argument: on sm90 the CUDA triton
    module is used and the ROCm one is not."""
    repo = _tree(
        tmp_path,
        {
            "python/sglang/srt/utils.py": "import torch\n\ndef is_hip():\n"
            "    return torch.version.hip is not None\n",
            "python/sglang/srt/model_executor/model_runner.py": """
            from sglang.srt.utils import is_hip

            _is_hip = is_hip()

            class ModelRunner:
                def init_attention_backend(self):
                    if self.server_args.attention_backend == "triton":
                        if not _is_hip:
                            from sglang.srt.layers.attention.triton_backend import TritonAttnBackend
                            self.attn_backend = TritonAttnBackend(self)
                        else:
                            from sglang.srt.layers.attention.rocm_triton_backend import Rocm
                            self.attn_backend = Rocm(self)
        """,
            ATTN + "triton_backend.py": "class TritonAttnBackend:\n    pass\n",
            ATTN + "rocm_triton_backend.py": "class Rocm:\n    pass\n",
        },
    )
    log = "[2026-01-01 00:00:00] server_args=ServerArgs(attention_backend='triton', tp_size=1)\n"
    files = _paths(
        repo, log, ATTN + "triton_backend.py", ATTN + "rocm_triton_backend.py", gpu="sm90"
    )
    assert files["triton_backend.py"]["status"] == "on", files["triton_backend.py"]
    assert files["rocm_triton_backend.py"]["status"] == "off", files["rocm_triton_backend.py"]


def test_a_backend_changed_after_the_dump_replaces_the_dumped_one(tmp_path: Path) -> None:
    repo = _registry_tree(tmp_path)
    log = (
        "[2026-01-01 00:00:00] server_args=ServerArgs(attention_backend='fa3', "
        "kv_cache_dtype='fp8_e5m2')\n"
        "[2026-01-01 00:00:01] FlashAttention3 only supports fp8_e4m3 if using FP8; "
        "Setting attention backend to triton.\n" + _loaded("LlamaForCausalLM")
    )
    files = _paths(repo, log, ATTN + "triton_backend.py", ATTN + "flashattention_backend.py")
    assert files["triton_backend.py"]["status"] == "on"
    assert files["flashattention_backend.py"]["status"] == "off"
    assert any(
        "sets the attention backend to triton" in e for e in files["triton_backend.py"]["evidence"]
    )


def test_the_draft_is_named_by_its_own_config(tmp_path: Path) -> None:
    """No second `Load weight end` line: the draft's architecture comes from the config.json
    of `speculative_draft_model_path`; its model file and the file it builds on are on."""
    repo = _registry_tree(tmp_path / "repo")
    draft = tmp_path / "eagle3-draft"
    draft.mkdir()
    (draft / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLMEagle3"]}))
    log = (
        "[2026-01-01 00:00:00] server_args=ServerArgs(attention_backend='triton', "
        f"speculative_algorithm='EAGLE3', speculative_draft_model_path='{draft}', "
        "model_path='meta-llama/Llama-3.1-8B-Instruct')\n" + _loaded("LlamaForCausalLM")
    )
    files = _paths(
        repo,
        log,
        "python/sglang/srt/models/llama_eagle3.py",
        "python/sglang/srt/models/deepseek_nextn.py",
    )
    assert files["llama_eagle3.py"]["status"] == "on", files["llama_eagle3.py"]
    assert files["deepseek_nextn.py"]["status"] == "off"


def test_an_unknown_draft_keeps_every_model_file_undecided(tmp_path: Path) -> None:
    repo = _registry_tree(tmp_path)
    log = (
        "[2026-01-01 00:00:00] server_args=ServerArgs(attention_backend='triton', "
        "speculative_algorithm='EAGLE', speculative_draft_model_path='org/some-draft', "
        "model_path='meta-llama/Llama-3.1-8B-Instruct')\n" + _loaded("LlamaForCausalLM")
    )
    files = _paths(repo, log, "python/sglang/srt/models/deepseek_nextn.py")
    assert files["deepseek_nextn.py"]["status"] == "unknown"
    assert any("architecture is not known" in e for e in files["deepseek_nextn.py"]["evidence"])


def test_mla_backends_only_for_mla_architectures(tmp_path: Path) -> None:
    """The flashinfer factory picks its MLA module only for an MLA model, as the release's
    model config defines them; an MTP draft of DeepSeek is renamed to NextN (still MLA)."""
    repo = _registry_tree(tmp_path)
    both = (ATTN + "flashinfer_backend.py", ATTN + "flashinfer_mla_backend.py")
    args = "[2026-01-01 00:00:00] server_args=ServerArgs(attention_backend='flashinfer'"
    llama = _paths(repo, args + ")\n" + _loaded("LlamaForCausalLM"), *both)
    assert llama["flashinfer_backend.py"]["status"] == "on"
    assert llama["flashinfer_mla_backend.py"]["status"] == "off"
    deepseek = _paths(
        repo,
        args
        + ", speculative_algorithm='EAGLE', model_path='deepseek-ai/DeepSeek-V3')\n"
        + _loaded("DeepseekV3ForCausalLM"),
        *both,
        "python/sglang/srt/models/deepseek_nextn.py",
    )
    assert deepseek["flashinfer_mla_backend.py"]["status"] == "on"
    assert deepseek["flashinfer_backend.py"]["status"] == "off"
    nextn = deepseek["deepseek_nextn.py"]
    assert nextn["status"] == "on", nextn


def test_the_server_args_printer_is_a_root_only_where_one_module_prints_them(
    tmp_path: Path,
) -> None:
    log = "[2026-03-02 09:14:01] server_args=ServerArgs(model_path='m', tp_size=8)\n"
    engine = 'def launch(server_args):\n    logger.info(f"server_args={server_args}")\n'
    texts = {"srt/entrypoints/engine.py": engine, "srt/utils.py": "x = 'server_args='\n"}
    roots = args_printer_root(tmp_path, log, texts)
    assert list(roots) == [tmp_path / "srt/entrypoints/engine.py"]
    assert (
        "(line 1), at srt/entrypoints/engine.py:2" in roots[tmp_path / "srt/entrypoints/engine.py"]
    )
    grpc = 'def run(server_args):\n    logger.info(f"{server_args=}")\n'
    assert args_printer_root(tmp_path, log, {**texts, "srt/grpc/launcher.py": grpc}) == {}
    assert args_printer_root(tmp_path, "no arguments here\n", texts) == {}
