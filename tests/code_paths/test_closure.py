"""The bound behind "off by absence": every way a module can be imported at run time keeps it in
the closure (imports in functions, names in strings, computed names, package walks, lazy export
tables); only a file nothing reachable names falls outside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.code_paths.test_serving import _loaded, _registry_tree
from tests.conftest import run_cli, write_package
from tools.code_paths.closure import can_import
from tools.code_paths.elsewhere import package_texts

ROOT = Path(__file__).resolve().parents[2]

FILES = {
    "server.py": """
        \"\"\"Starts the server; pkg.mentioned_in_text says how.\"\"\"
        import sys
        import pkg.eager

        if "pkg.looked_up" in sys.modules or sys.modules.get("pkg.looked_up"):
            pass

        def start():
            from pkg import in_function
            run("pkg.by_string:main")
            load_module("pkg.built." + name)
        """,
    "eager.py": "from . import relative\n",
    "relative.py": "",
    "in_function.py": "",
    "by_string.py": "import pkg.plugins\n",
    "built/__init__.py": "",
    "built/one.py": "",
    "plugins/__init__.py": """
        from importlib import import_module
        for group in ("x", "y"):
            import_module(f"{__name__}.{group}")
        """,
    "plugins/x.py": "import pkg.lazy\n",
    "plugins/y.py": "",
    "lazy/__init__.py": """
        import importlib
        _EXPORTS = {"fast": ".impl"}

        def __getattr__(name):
            return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
        """,
    "lazy/impl.py": "import pkg.loader.registry\n",
    "loader/__init__.py": "",
    "loader/registry.py": """
        import pkgutil

        def load(package_name="pkg.models"):
            for _, name, _ in pkgutil.iter_modules(package.__path__, package_name + "."):
                importlib.import_module(name)
        """,
    "models/__init__.py": "",
    "models/llama.py": "",
    "unselected.py": "import pkg.only_by_unselected\n",
    "only_by_unselected.py": "",
    "island.py": "# nothing names this module\n",
    "looked_up.py": "",
    "mentioned_in_text.py": "",
}


def test_every_way_of_importing_keeps_a_module_in_the_closure(tmp_path: Path) -> None:
    pkg = write_package(tmp_path, FILES)
    unselected = pkg / "unselected.py"
    closure = can_import(
        tmp_path,
        package_texts(pkg),
        [pkg / "server.py", unselected],
        followed=lambda path: path != unselected,
    )
    reached = {p.relative_to(pkg).as_posix() for p in closure.files}
    assert reached >= {
        "eager.py",
        "relative.py",
        "in_function.py",
        "by_string.py",
        "built/one.py",
        "plugins/x.py",
        "plugins/y.py",
        "lazy/impl.py",
        "loader/registry.py",
        "models/llama.py",
    }
    # nothing names the island; what only an unselected backend imports is not reached through
    # it; a module named in prose, or looked up in sys.modules, is not imported
    unnamed = {"island.py", "only_by_unselected.py", "mentioned_in_text.py", "looked_up.py"}
    assert unnamed.isdisjoint(reached)
    assert closure.searched == len(FILES) + 1


def test_a_file_nothing_reachable_names_is_off_and_one_imported_in_a_function_is_not(
    tmp_path: Path,
) -> None:
    """Through `paths`: a module no code of the package names is off, with the bound as its
    evidence; one the model runner imports inside a method stays undecided (it may run)."""
    repo = _registry_tree(tmp_path)
    srt = repo / "python/sglang/srt"
    (srt / "model_executor/model_runner.py").write_text(
        "class ModelRunner:\n    def load(self):\n        from sglang.srt import lazy_helper\n"
    )
    (srt / "lazy_helper.py").write_text("")
    (srt / "orphan.py").write_text("")
    (repo / "server.log").write_text(
        "[2026-01-01 00:00:00] server_args=ServerArgs(attention_backend='triton', "
        "model_path='meta-llama/Llama-3.1-8B-Instruct')\n" + _loaded("LlamaForCausalLM")
    )
    done = run_cli(
        "paths", "--log", str(repo / "server.log"), "--repo", str(repo), "--json",
        "python/sglang/srt/orphan.py", "python/sglang/srt/lazy_helper.py",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    files = {Path(f["path"]).name: f for f in json.loads(done.stdout)["files"]}
    assert files["orphan.py"]["status"] == "off", files["orphan.py"]
    assert "nothing the server can run names it" in files["orphan.py"]["evidence"][0]
    assert files["lazy_helper.py"]["status"] == "unknown", files["lazy_helper.py"]


BY_PATH = {
    "server.py": "from pkg.utils import is_list\nNAME = 'pkg.platforms'\n",
    "utils.py": """
        import importlib.util
        from pkg import platforms

        def is_list(x):
            return isinstance(x, list)

        def import_from_path(name, path):
            spec = importlib.util.spec_from_file_location(name, path)
            return spec
        """,
    "platforms/__init__.py": "",
    "platforms/tpu.py": "",
    "plugin_user.py": "from pkg.utils import import_from_path\nPLUGINS = 'pkg.plugins'\n",
    "plugins/__init__.py": "",
    "plugins/a.py": "",
}


def test_a_loader_by_path_lists_only_what_its_callers_hand_it(tmp_path: Path) -> None:
    """vLLM's `vllm.utils.import_from_path` loads a file by path: it lists no submodule of the
    packages utils.py imports (no `__path__` read), and only a caller that imports it hands
    it names. Before, every importer of `is_list_of` handed its strings, and the platforms
    package's children (tpu.py, rocm.py) were listed for every server."""
    pkg = write_package(tmp_path, BY_PATH)
    texts = package_texts(pkg)
    alone = can_import(tmp_path, texts, [pkg / "server.py"], followed=lambda path: True)
    reached = {p.relative_to(pkg).as_posix() for p in alone.files}
    assert "platforms/__init__.py" in reached and "platforms/tpu.py" not in reached
    assert "plugins/a.py" not in reached
    both = can_import(
        tmp_path, texts, [pkg / "server.py", pkg / "plugin_user.py"], followed=lambda path: True
    )
    assert pkg / "plugins/a.py" in both.files  # its caller hands the walk 'pkg.plugins'


NAMED_TWICE = """
import json
import sys
from pathlib import Path

from tools.code_paths.closure import can_import
from tools.code_paths.elsewhere import package_texts

pkg = Path(sys.argv[1])
closure = can_import(pkg.parent, package_texts(pkg), [pkg / "server.py"], lambda path: True)
print(json.dumps({str(p.relative_to(pkg)): by for p, by in sorted(closure.named_by.items())}))
"""


def test_which_file_named_a_module_first_is_the_same_in_every_process(tmp_path: Path) -> None:
    """The evidence quotes the file that first named a module; sets of names iterate in an
    order of their hashes, which Python seeds anew in each process."""
    names = [f"m{i}" for i in range(12)]
    pkg = write_package(
        tmp_path,
        {
            "server.py": "".join(f"import pkg.{n}\n" for n in names),
            **{f"{n}.py": "import pkg.target\n" for n in names},
            "target.py": "",
        },
    )
    said = {
        subprocess.run(
            [sys.executable, "-c", NAMED_TWICE, str(pkg)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(ROOT)},
        ).stdout
        for seed in range(6)
    }
    assert len(said) == 1, said
    assert json.loads(said.pop())["target.py"].startswith("pkg.m")
