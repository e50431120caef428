"""A library target: no server, no [launch]; the bench script kept beside the config, outside
the repository (`{config_dir}/bench.py`), imports the package from the scratch tree
(`{worktree}`). `check`, `experiment`, `investigate` and a resume with a raised budget."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import assert_one_line_error, make_repo, run_cli

CORE = textwrap.dedent("""\
    import time

    DELAY_S = 0.001


    def parse(text):
        time.sleep(DELAY_S)
        return [line.split(",") for line in text.splitlines()]
""")
VERSION = 'VERSION = "0.1"\n'
BENCH = textwrap.dedent("""\
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from csvparse import parse
    for _ in range(3):  # each sample the fastest of 5 calls: a busy machine only slows calls
        fastest = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            parse("a,b\\n1,2\\n")
            fastest = min(fastest, time.perf_counter() - start)
        print(f"parse_ms: {fastest * 1000:.2f}")
""")
CONFIG = textwrap.dedent("""\
    [target]
    repo = "../repo"
    good = "good"
    [bench]
    kind = "command"
    command = "{python} {config_dir}/bench.py {worktree}"
    metric = "parse_ms"
    metric_regex = "parse_ms: ([0-9.]+)"
    timeout_s = 60
""")


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The config's folder: beside it the repository `../repo`, with two uncommitted hunks, one
    of which (the sleep) makes parsing 20 times slower."""
    root = tmp_path_factory.mktemp("library")
    repo = make_repo(root, {"csvparse.py": CORE, "version.py": VERSION})
    (repo / "csvparse.py").write_text(CORE.replace("0.001", "0.020"))
    (repo / "version.py").write_text(VERSION.replace("0.1", "0.2"))
    config_dir = root / "bench-config"
    config_dir.mkdir()
    (config_dir / "debug-agent.toml").write_text(CONFIG)
    (config_dir / "bench.py").write_text(BENCH)
    return config_dir


def test_check_resolves_the_bench_script(library: Path) -> None:
    done = run_cli("check", cwd=library)
    assert done.returncode == 0 and done.stdout.startswith("ok:"), done.stderr
    shutil.move(library / "bench.py", library / "bench.py.away")
    try:
        assert_one_line_error(
            run_cli("check", cwd=library),
            f"the script '{library.resolve() / 'bench.py'}' does not exist",
        )
    finally:
        shutil.move(library / "bench.py.away", library / "bench.py")


def test_a_symptom_about_another_metric_is_refused(library: Path) -> None:
    assert_one_line_error(
        run_cli("investigate", "--symptom", "verify 29ms", cwd=library),
        "names 'verify', but the bench measures 'parse_ms'",
    )


def test_experiment_runs_the_bench_in_the_scratch_tree(library: Path) -> None:
    done = run_cli("experiment", "--json", cwd=library)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["metric"]["name"] == "parse_ms" and result["metric"]["unit"] == ""
    assert len(result["metric"]["samples"]) == 3
    assert result["metric"]["median"] >= 20  # the slow hunk is in the bad tree
    assert "bench.py" in result["worker_env"]["processes"][0]["cmdline"]


def test_investigate_confirms_the_culprit_and_a_resume_raises_the_budget(library: Path) -> None:
    done = run_cli(
        "investigate", "--symptom", "parse_ms 265 (was 7)", "--max-launches", "2", "--json",
        cwd=library,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    stopped = json.loads(done.stdout)
    assert stopped["status"] == "budget_exhausted", stopped["notes"]
    assert_one_line_error(
        run_cli("investigate", "--resume", stopped["session"], "--max-launches", "2", cwd=library),
        "has spent 2 launches already",
    )
    done = run_cli(
        "investigate", "--resume", stopped["session"], "--max-launches", "30", "--json",
        cwd=library,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    assert [c["file"] for c in result["culprits"]] == ["csvparse.py"]
    assert result["metric"]["name"] == "parse_ms"
    assert result["metric"]["bad"] > 5 * result["metric"]["good"]
    assert result["launches"] > 2


def test_init_in_a_library_writes_a_command_bench(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"csvparse.py": CORE})
    done = run_cli("init", cwd=repo)
    assert done.returncode == 0, done.stderr
    text = (repo / "debug-agent.toml").read_text()
    assert "\n[launch]" not in text and "{worktree}" in text and "metric_regex" in text
    assert_one_line_error(run_cli("check", cwd=repo), "bench.py' does not exist")


def test_a_launch_table_without_a_command_holds_only_env(library: Path, tmp_path: Path) -> None:
    """[launch] env alone serves the command bench; anything else there means a server, whose
    command is missing (never silently no server)."""
    config = tmp_path / "debug-agent.toml"
    text = (
        (library / "debug-agent.toml").read_text().replace("../repo", str(library.parent / "repo"))
    )
    shutil.copy(library / "bench.py", tmp_path / "bench.py")
    config.write_text(text + '[launch]\nenv = { PARSE_THREADS = "1" }\n')
    assert run_cli("check", cwd=tmp_path).returncode == 0
    config.write_text(text + '[launch]\nenv = { PARSE_THREADS = "1" }\nready = "/health"\n')
    assert_one_line_error(run_cli("check", cwd=tmp_path), "launch.command: Field required")


def test_a_module_missing_under_python_is_explained(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"csvparse.py": CORE, "bench.py": "import numpy_not_here\n"})
    (repo / "csvparse.py").write_text(CORE.replace("0.001", "0.020"))
    (repo / "debug-agent.toml").write_text(
        CONFIG.replace("../repo", ".").replace("{config_dir}/bench.py {worktree}", "bench.py")
    )
    done = run_cli("investigate", "--symptom", "parse_ms 20 (was 1)", "--json", cwd=repo)
    result = json.loads(done.stdout)
    assert result["status"] == "error" and done.returncode == 1
    assert (
        "No module named 'numpy_not_here'; {python} is debug-agent's own interpreter"
        in (result["notes"][-1])
    )


def test_init_names_the_projects_python_and_its_src_layout(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"src/csvparse/__init__.py": CORE, ".gitignore": ".venv/\n"})
    (repo / ".venv/bin").mkdir(parents=True)
    (repo / ".venv/bin/python").symlink_to(sys.executable)
    done = run_cli("init", cwd=repo, env={"VIRTUAL_ENV": ""})
    assert done.returncode == 0, done.stderr
    command = next(
        line for line in (repo / "debug-agent.toml").read_text().splitlines()
        if line.startswith("command =")
    )  # fmt: skip
    assert command == (
        f'command = "{repo / ".venv/bin/python"} {{config_dir}}/.debug-agent/bench.py '
        '{worktree}/src"'
    )
