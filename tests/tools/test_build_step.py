"""[build]: a step each scratch tree runs before its launches (here a code generator that
compiles a data file into a module). What the build reads is on the path (the data file is
confirmed, not dropped as never opened); a configuration whose build fails is unresolved with
the build's own words, and the search goes on around it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import assert_one_line_error, make_repo, run_cli
from tests.tools.work_library import BENCH, config, investigate

GEN = textwrap.dedent("""\
    import pathlib
    import sys

    text = pathlib.Path("speed.in").read_text().strip()
    if not text.replace(".", "").isdigit():
        sys.exit(f"gen.py: speed.in holds {text!r}, not a number")
    pathlib.Path("src/mylib/_speed.py").write_text(f"DELAY_S = {text}\\n")
""")
BUILD = '[build]\ncommand = "{python} gen.py"\n'
CORE = textwrap.dedent("""\
    import time

    from mylib._speed import DELAY_S


    def work():
        time.sleep(DELAY_S)
""")


def _library(tmp_path: Path) -> Path:
    repo = make_repo(
        tmp_path,
        {
            "gen.py": GEN,
            "speed.in": "0.001\n",
            "src/mylib/__init__.py": "",
            "src/mylib/core.py": CORE,
            ".gitignore": "src/mylib/_speed.py\n",
            "README.md": "# mylib\n",
            "bench.py": BENCH,
        },
    )
    (repo / "README.md").write_text("# mylib\n\nFaster, they said.\n")  # read by nobody
    (repo / "debug-agent.toml").write_text(config(before=BUILD, launches=16))
    return repo


def test_a_data_file_only_the_build_reads_is_confirmed(tmp_path: Path) -> None:
    repo = _library(tmp_path)
    (repo / "speed.in").write_text("0.020\n")
    result = investigate(repo)
    assert result["status"] == "confirmed", result["notes"]
    assert [c["file"] for c in result["culprits"]] == ["speed.in"]
    assert {d["file"]: d["reason"] for d in result["dropped"]} == {"README.md": "file never opened"}


def test_configurations_that_do_not_build_are_unresolved_and_the_search_goes_on(
    tmp_path: Path,
) -> None:
    """The generator learns a new format and the data file uses it: either alone does not
    build. Then the two are one cause, confirmed together."""
    repo = _library(tmp_path)
    (repo / "gen.py").write_text(
        GEN.replace(
            'text = pathlib.Path("speed.in").read_text().strip()',
            'key, _, text = pathlib.Path("speed.in").read_text().strip().partition("=")',
        ).replace('if not text.replace(".", "").isdigit():', 'if key != "delay":')
        .replace("not a number", "not delay=<number>")
    )  # fmt: skip
    (repo / "speed.in").write_text("delay=0.020\n")
    result = investigate(repo)
    assert result["status"] == "confirmed", result["notes"]
    assert sorted(c["file"] for c in result["culprits"]) == ["gen.py", "speed.in"]
    failed = [u for u in result["unresolved"] if u["stage"] == "build"]
    assert failed and all(
        u["error"].startswith("the build step `{python} gen.py` exited 1") for u in failed
    )
    assert any("not delay=<number>" in u["error"] for u in failed), failed
    assert any("cannot be separated from the rest of the set" in n for n in result["notes"])


def test_check_finds_the_build_script(tmp_path: Path) -> None:
    repo = _library(tmp_path)
    assert run_cli("check", cwd=repo).returncode == 0
    (repo / "debug-agent.toml").write_text(config(before=BUILD.replace("gen", "generate")))
    assert_one_line_error(
        run_cli("check", cwd=repo), "build.command: the script 'generate.py' does not exist"
    )
