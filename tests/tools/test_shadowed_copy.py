"""A library whose changed files the bench loads from another copy: the user's own checkout on
the path (what `pip install -e .` does) or an installed copy. Every configuration would run the
same code: from the user's checkout the investigation stops after the references with status
error and says where the files came from; from an installed copy, which may be meant, the
report says so where the change does not show. With the scratch tree first on the path (a
relative PYTHONPATH in a [launch] holding only an env) the same target is confirmed, and the
bench script, which runs as `__main__`, is not taken for a file nobody imported."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import make_repo
from tests.tools.work_library import BENCH, config, investigate

INIT = "from mylib.core import work\n"
CORE = "import time\n\nDELAY_S = 0.001\n\n\ndef work():\n    time.sleep(DELAY_S)\n"


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """src/mylib, whose uncommitted change makes work() 20 times slower; bench.py at the root,
    changed too (a harmless constant)."""
    repo = make_repo(
        tmp_path, {"src/mylib/__init__.py": INIT, "src/mylib/core.py": CORE, "bench.py": BENCH}
    )
    (repo / "src/mylib/core.py").write_text(CORE.replace("0.001", "0.020"))
    (repo / "bench.py").write_text(BENCH.replace("REPEATS = 3", "REPEATS = 4"))
    return repo


def _investigate(repo: Path, pythonpath: str, bench: str = "{python} bench.py") -> dict:
    (repo / "debug-agent.toml").write_text(config(pythonpath, bench))
    return investigate(repo)


def test_the_users_own_checkout_on_the_path_stops_the_investigation(library: Path) -> None:
    result = _investigate(library, str(library / "src"))  # as an editable install puts it
    assert result["status"] == "error" and result["launches"] == 2, result["notes"]
    note = result["notes"][-1]
    assert f"src/mylib/core.py from {library.resolve()}/src/mylib/core.py" in note, note
    assert "every configuration would run the same code" in note


def test_an_installed_copy_is_named_where_the_change_does_not_show(
    library: Path, tmp_path: Path
) -> None:
    """Another copy may be meant (a vendored package beside its installed twin): no stop, but
    the change's absence is explained where it shows."""
    site = tmp_path / "site-packages"
    shutil.copytree(library / "src", site)  # the package as `pip install .` copies it
    result = _investigate(library, str(site))
    assert result["status"] in ("not_reproduced", "no_regression"), result["notes"]
    where = f"src/mylib/core.py was read from {site.resolve()}/mylib/core.py"
    assert any(note.startswith(where) for note in result["notes"]), result["notes"]


def test_the_scratch_tree_first_on_the_path_is_confirmed(library: Path) -> None:
    result = _investigate(library, "src")  # relative: the scratch tree's
    assert result["status"] == "confirmed", result["notes"]
    assert [c["file"] for c in result["culprits"]] == ["src/mylib/core.py"]
    dropped = {d["file"]: d["reason"] for d in result["dropped"]}
    assert "bench.py" not in dropped, dropped  # it ran as __main__: imported, and cleared
    assert any(c["candidate"].startswith("bench-") for c in result["cleared"]), result["cleared"]


def test_a_bench_script_named_in_the_users_checkout_is_where_the_user_pointed(
    library: Path,
) -> None:
    """`{config_dir}/bench.py` runs the checkout's own (changed) script on purpose: no stop."""
    result = _investigate(library, "src", "{python} {config_dir}/bench.py")
    assert result["status"] == "confirmed", result["notes"]
    assert [c["file"] for c in result["culprits"]] == ["src/mylib/core.py"]
