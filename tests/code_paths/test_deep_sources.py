"""Sources no reader can follow to the bottom: a 200,000-deep unary minus (ast.parse raises
MemoryError), a chain of 100,000 additions (RecursionError while building the tree), and a
chain of 900 that parses but is deeper than `ast.unparse` can go. Each was an internal error
of `paths` or a crash of an investigation; now each is unreadable or undecided, and the rest
of the tree is still judged."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.code_paths.lab_paths import lab_paths
from tests.conftest import REPO_ROOT, investigate_seed
from tools.python_ast import parse_module

DEEP = {
    "minus": "Y = " + "-" * 200_000 + "1\n",
    "long chain": "Y = " + " + ".join(["1"] * 100_000) + "\n",
    "NUL": "Y = 1\x00\n",
}
PARSES_BUT_TOO_DEEP = "Y = " + " + ".join(["1"] * 900) + "\n"


@pytest.mark.parametrize("source", DEEP.values(), ids=DEEP.keys())
def test_what_cannot_be_parsed_is_a_syntax_error(source: str) -> None:
    with pytest.raises(SyntaxError):
        parse_module(source)


def test_paths_judges_a_tree_with_sources_too_deep_to_follow(
    seed_lab: Path, tmp_path: Path
) -> None:
    lab = tmp_path / "lab"
    shutil.copytree(seed_lab, lab, symlinks=True)
    layers = lab / "python" / "sglang" / "srt" / "layers" / "__init__.py"
    layers.write_text(layers.read_text() + DEEP["minus"] + PARSES_BUT_TOO_DEEP)
    files = lab_paths(lab, tmp_path)
    assert files["__init__.py"] in ("on", "unknown") and files["parallel_state.py"] == "on"


def test_hunk_words_are_read_in_linear_time() -> None:
    """A 2 MB word in a hunk: the file-name, call and chain patterns began at every position of
    it, each scanning to its end (hours for 2 MB, minutes for the 20 MB seen). Run apart, so
    that a quadratic pattern fails this test instead of hanging the suite."""
    code = (
        "from tools.code_paths.dependencies import dependencies\n"
        "from tools.repo.candidates import Candidate\n"
        "body = 'X = \"' + 'a' * 2_000_000 + '\"'\n"
        "c = Candidate(id='t-1', kind='hunk', file='t.py', header='@@ -0,0 +1,1 @@', "
        "patch='--- /dev/null\\n+++ b/t.py\\n@@ -0,0 +1,1 @@\\n+' + body + '\\n', origin='o')\n"
        "dependencies([c], {}, {'t.py': body})\n"
        "print('done')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "done", done.stderr[-2000:]


def test_an_investigation_with_a_source_too_deep_to_follow_still_names_the_culprit(
    seed_lab: Path, tmp_path: Path
) -> None:
    """The relevance checks read a changed file's guards through `ast.unparse`: past its depth
    the run stopped with a RecursionError. A check that cannot follow a source decides nothing."""
    lab = tmp_path / "lab"
    shutil.copytree(seed_lab, lab, symlinks=True)
    layers = lab / "python" / "sglang" / "srt" / "layers" / "__init__.py"
    layers.write_text(layers.read_text() + PARSES_BUT_TOO_DEEP)
    result = json.loads(investigate_seed(lab).stdout)
    assert result["status"] == "confirmed", result["notes"]
    assert [c["id"] for c in result["culprits"]] == ["parallel_state-2ce853"]
