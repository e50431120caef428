"""Another platform's module is off when code outside that platform can import it only where the
GPU says it cannot run: imports resolved to the module they name (a same-named module elsewhere
is another module), namings under `if _is_npu:` set aside on CUDA with their place, and what a
reachable platform module imports in turn followed."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write_package
from tools.code_paths.elsewhere import elsewhere
from tools.gpu.info import GpuInfo

CUDA = GpuInfo(vendor="cuda", sm=90, source="the log")
FILES = {
    "utils.py": """
        def is_npu():
            return hasattr(torch, "npu")
        """,
    "layers/moe/topk.py": "def select(): pass\n",
    "layers/moe/runner.py": "from pkg.layers.moe.topk import select\n",
    "mem_cache/memory_pool.py": """
        from pkg.utils import is_npu

        _is_npu = is_npu()

        def make_pool():
            if _is_npu:
                from pkg.hardware_backend.npu.memory_pool_npu import NPUPool
                return NPUPool()
            else:
                from pkg.hardware_backend.npu import shared
            return shared.pool()
        """,
    "hardware_backend/__init__.py": "",
    "hardware_backend/npu/__init__.py": "",
    "hardware_backend/npu/memory_pool_npu.py": "class NPUPool: pass\n",
    "hardware_backend/npu/shared.py": "from .helpers import pool\n",
    "hardware_backend/npu/helpers.py": "def pool(): pass\n",
    "hardware_backend/npu/moe/__init__.py": "",
    "hardware_backend/npu/moe/topk.py": "def select(): pass\n",
}


def test_a_platform_module_named_only_under_a_false_guard_is_off(tmp_path: Path) -> None:
    pkg = write_package(tmp_path, FILES)
    evidence = elsewhere("hardware_backend/npu/memory_pool_npu.py", pkg, CUDA)
    assert evidence is not None
    said = " ".join(evidence)
    assert "code for Ascend NPUs" in said
    assert "named only under tests this GPU fails: mem_cache/memory_pool.py:7" in said
    assert "`if _is_npu:`" in said


def test_a_same_named_module_elsewhere_does_not_name_it(tmp_path: Path) -> None:
    """layers/moe/runner.py imports pkg.layers.moe.topk, not the NPU's moe/topk.py."""
    pkg = write_package(tmp_path, FILES)
    assert elsewhere("hardware_backend/npu/moe/topk.py", pkg, CUDA) is not None


def test_what_runs_is_not_off_nor_what_it_imports_in_turn(tmp_path: Path) -> None:
    """The else branch runs on CUDA: shared.py is imported, and helpers.py through it."""
    pkg = write_package(tmp_path, FILES)
    assert elsewhere("hardware_backend/npu/shared.py", pkg, CUDA) is None
    assert elsewhere("hardware_backend/npu/helpers.py", pkg, CUDA) is None


def test_on_an_npu_nothing_is_another_platforms(tmp_path: Path) -> None:
    pkg = write_package(tmp_path, FILES)
    npu = GpuInfo(vendor="npu", source="the log")
    assert elsewhere("hardware_backend/npu/memory_pool_npu.py", pkg, npu) is None
