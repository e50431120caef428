"""Code that runs only on another platform is taken out of what the server can name: the
branch the GPU decides against, and a function only that branch used (vLLM 0.8's
`rocm_unquantized_gemm`, returned where `current_platform.is_rocm()`, imports ROCm's helpers)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import write_package
from tools.code_paths.cache import SummaryCache
from tools.code_paths.modules import ModuleGraph
from tools.gpu.info import parse_gpu_option
from tools.vllm.blanking import without_strings
from tools.vllm.platform_branches import other_platform_blanked

FILES = {
    "platforms/__init__.py": "current_platform = None\n",
    "platforms/rocm.py": "def on_mi250_mi300():\n    return False\n",
    "layers/utils.py": """
        from vllm.platforms import current_platform

        def rocm_unquantized_gemm(x):
            from vllm.platforms.rocm import on_mi250_mi300
            return on_mi250_mi300()

        def shared_helper(x):
            from vllm.platforms.rocm import on_mi250_mi300
            return x

        def dispatch_unquantized_gemm():
            if current_platform.is_rocm():
                return rocm_unquantized_gemm
            return shared_helper
        """,
    "layers/other.py": "from vllm.layers.utils import shared_helper\n",
}


def test_a_function_only_the_other_platforms_branch_used_is_dead(tmp_path: Path) -> None:
    pkg = write_package(tmp_path, FILES, name="vllm")
    texts = {p: p.read_text() for p in pkg.rglob("*.py")}
    graph = ModuleGraph(tmp_path, display_root=pkg)
    out = other_platform_blanked(texts, graph, parse_gpu_option("sm90"))
    utils = out[pkg / "layers/utils.py"]
    assert "return rocm_unquantized_gemm" not in utils  # the branch CUDA never takes
    body = utils.split("def shared_helper")[0]
    assert "vllm.platforms.rocm" not in body  # its only user was that branch
    # used elsewhere (another module imports it): it may run, its import stays
    assert "vllm.platforms.rocm" in utils.split("def shared_helper")[1]
    assert len(utils.splitlines()) == len(texts[pkg / "layers/utils.py"].splitlines())
    # on a ROCm GPU nothing is blanked away from the branch
    rocm = other_platform_blanked(texts, graph, parse_gpu_option("gfx942"))
    assert "return rocm_unquantized_gemm" in rocm[pkg / "layers/utils.py"]


PLUGINS = {
    "platforms/__init__.py": """
        def xpu_platform_plugin():
            import torch

            if torch.distributed.is_xccl_available():
                from vllm.platforms.xpu import XPUPlatform
            if hasattr(torch, "xpu") and torch.xpu.is_available():
                return "xpu"
            return None
        """,
    "platforms/xpu.py": "class XPUPlatform:\n    pass\n",
}


def test_torch_of_a_cuda_or_rocm_build_has_no_xpu_and_no_xccl(tmp_path: Path) -> None:
    """vLLM 0.34 asks every platform plugin at start-up; the XPU one imports its platform
    where torch has XCCL, which only torch's XPU builds ship."""
    pkg = write_package(tmp_path, PLUGINS, name="vllm")
    texts = {p: p.read_text() for p in pkg.rglob("*.py")}
    graph = ModuleGraph(tmp_path, display_root=pkg)
    for gpu in ("sm90", "gfx942"):
        plugins = other_platform_blanked(texts, graph, parse_gpu_option(gpu))[
            pkg / "platforms/__init__.py"
        ]
        assert "vllm.platforms.xpu" not in plugins and 'return "xpu"' not in plugins


def test_the_facts_kept_between_runs_give_the_same_blanking(tmp_path: Path) -> None:
    """A second run reads each file's platform branches from the cache (keyed by the text:
    a rule may have blanked lines of it first), and a text that changed is read anew."""
    pkg = write_package(tmp_path, FILES, name="vllm")
    texts = {p: p.read_text() for p in pkg.rglob("*.py")}
    gpu = parse_gpu_option("sm90")
    kept = SummaryCache(pkg)
    first = other_platform_blanked(texts, ModuleGraph(tmp_path, pkg, kept), gpu)
    kept.save()  # as `paths` does when it is done
    cache = SummaryCache(pkg)
    utils = pkg / "layers/utils.py"
    assert cache.get_for_text(utils, "platform-ifs", texts[utils]) is not None
    assert other_platform_blanked(texts, ModuleGraph(tmp_path, pkg, cache), gpu) == first
    # the branch turned around: the cached facts of the old text are not read for the new one
    turned = texts[utils].replace(
        "if current_platform.is_rocm():", "if current_platform.is_cuda():"
    )
    again = other_platform_blanked(
        {**texts, utils: turned}, ModuleGraph(tmp_path, pkg, SummaryCache(pkg)), gpu
    )
    assert "return rocm_unquantized_gemm" in again[utils]


def test_strings_are_cut_where_their_bytes_are() -> None:
    """Column offsets count UTF-8 bytes: a non-ASCII character before a literal on its line,
    and a literal split over implicitly joined lines, are cut whole, line numbers kept."""
    text = 'x = ("é", "vllm.a.B")\nREG = {\n    "k": ("vllm.b."\n           "C"),\n}\n'
    tree = ast.parse(text)
    wanted = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and str(n.value).startswith("vllm.")
    ]
    out = without_strings(text, wanted)
    assert out == "x = (\"é\", '')\nREG = {\n    \"k\": (''\n),\n}\n"
    assert len(out.splitlines()) == len(text.splitlines())
