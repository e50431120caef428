"""What vLLM's arguments select, read from the args line: the KV connector, the executor, and
whether the device communicator (and what its `__init__` imports) is built at all. A value the
line does not show selects nothing."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write_package
from tools.vllm.by_arguments import (
    FACTORY,
    communicator_blanked,
    communicator_imports,
    connectors_blanked,
    executor_backend,
    executor_blanked,
    world_size,
)
from tools.vllm.unselected import selection_texts

FILES = {
    "__init__.py": "",
    FACTORY: """
        class KVConnectorFactory:
            @classmethod
            def register_connector(cls, name, module_path, class_name):
                pass

        KVConnectorFactory.register_connector(
            "PyNcclConnector", "vllm.kv.simple_connector", "SimpleConnector")
        KVConnectorFactory.register_connector(
            "LMCacheConnector", "vllm.kv.lmcache_connector", "LMCacheConnector")
        """,
    "comm.py": """
        class CudaCommunicator:
            def __init__(self):
                from vllm.pynccl import PyNccl
                self.ok = True
        """,
    "pynccl.py": "",
    "executor.py": """
        def get_class(distributed_executor_backend):
            if distributed_executor_backend == "mp":
                from vllm.multiproc import MultiprocExecutor
                return MultiprocExecutor
            elif distributed_executor_backend == "uni":
                return None
        """,
}


def _texts(pkg: Path) -> dict[Path, str]:
    return {p: p.read_text() for p in pkg.rglob("*.py")}


def test_the_arguments_tell_the_world_size_and_the_executor() -> None:
    full = {"tensor_parallel_size": 2, "pipeline_parallel_size": 1}
    assert world_size(full, "namespace") == 2
    assert world_size({"model": "m"}, "non-default") == 1  # defaults omitted
    assert world_size({"model": "m"}, "namespace") is None  # a cut Namespace: unknown
    assert world_size(None, None) is None
    one = {"tensor_parallel_size": 1, "pipeline_parallel_size": 1}
    assert executor_backend({**one, "distributed_executor_backend": None}, "namespace") == "uni"
    assert executor_backend({**full, "distributed_executor_backend": None}, "namespace") is None
    assert executor_backend({"distributed_executor_backend": "ray"}, "non-default") == "ray"


def test_the_connectors_the_config_does_not_name_are_blanked(tmp_path: Path) -> None:
    pkg = write_package(tmp_path, FILES, name="vllm")
    texts = _texts(pkg)
    none = connectors_blanked(texts, pkg, {"kv_transfer_config": None}, "namespace")
    assert "vllm.kv." not in none[pkg / FACTORY]
    lm = {"kv_transfer_config": "KVTransferConfig(kv_connector='LMCacheConnector')"}
    chosen = connectors_blanked(texts, pkg, lm, "namespace")[pkg / FACTORY]
    assert "vllm.kv.lmcache_connector" in chosen and "vllm.kv.simple_connector" not in chosen
    assert connectors_blanked(texts, pkg, {"model": "m"}, "namespace") == texts  # not shown
    unreadable = {"kv_transfer_config": {"something": 1}}
    assert connectors_blanked(texts, pkg, unreadable, "namespace") == texts
    assert len(none[pkg / FACTORY].splitlines()) == len(texts[pkg / FACTORY].splitlines())


def test_a_group_of_one_builds_no_communicator_and_another_backend_no_executor(
    tmp_path: Path,
) -> None:
    pkg = write_package(tmp_path, FILES, name="vllm")
    texts = _texts(pkg)
    assert communicator_imports(pkg, ["comm.py"]) == {pkg / "pynccl.py": (pkg / "comm.py", 3)}
    blanked = communicator_blanked(texts, pkg, ["comm.py"])[pkg / "comm.py"]
    assert "pynccl" not in blanked and "self.ok = True" in blanked
    uni = executor_blanked(texts, "uni")[pkg / "executor.py"]
    assert "multiproc" not in uni and "return None" in uni
    assert "multiproc" in executor_blanked(texts, "mp")[pkg / "executor.py"]
    assert executor_blanked(texts, None) == texts


SPEC = {
    "v1/worker/gpu/spec_decode/__init__.py": "",
    "v1/worker/gpu/spec_decode/eagle/__init__.py": "",
    "v1/worker/gpu/spec_decode/eagle/config.py": """
        class EagleSpeculatorConfig:
            base_method = "eagle"
            speculator_class = "vllm.v1.worker.gpu.spec_decode.eagle.speculator.EagleSpeculator"
        """,
    "v1/worker/gpu/spec_decode/eagle/speculator.py": "class EagleSpeculator:\n    pass\n",
}


def test_the_speculative_method_picks_one_speculator(tmp_path: Path) -> None:
    """0.34's speculator configs name their speculator class by string: with no speculative
    config none is built; with one, only its method's."""
    pkg = write_package(tmp_path, SPEC, name="vllm")
    config = pkg / "v1/worker/gpu/spec_decode/eagle/config.py"
    named = "vllm.v1.worker.gpu.spec_decode.eagle.speculator"
    assert named not in selection_texts(pkg, [], None, None, "")[config]  # no config
    assert named in selection_texts(pkg, [], None, None, "eagle")[config]  # its method
    assert named in selection_texts(pkg, [], None, None, None)[config]  # unknown: kept
