"""A [stack] that cannot be built is one line from `check` and from `investigate`, before any
launch: an unreadable lock file, a version that does not exist, nothing to build from."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import assert_one_line_error, make_repo, run_cli

CASES: dict[str, tuple[str, ...]] = {
    "an unreadable lock file": (
        'good = "uv.lock"\nwheels = "wheels"',
        "uv.lock is not UTF-8 text",
    ),
    "a version that does not exist": (
        'good = "good.txt"\nbad = "bad.txt"\nwheels = "wheels"\noffline = true',
        "(offline): slowlib==9.9",
    ),
    "offline with no wheel folder": (
        'good = "good.txt"\nbad = "bad.txt"\noffline = true',
        "offline with no wheel folder",
    ),
    "a package repository that is not there": (
        'good = "good.txt"\nbad = "bad.txt"\nrepos = { slowlib = "no/such/folder" }',
        "slowlib's repository no/such/folder is neither a path nor a URL",
    ),
    "a repository for a package neither set holds": (
        'good = "good.txt"\nbad = "bad.txt"\nrepos = { fastlib = "https://example.invalid/f" }',
        "fastlib is in neither package set",
    ),
    "an index that cannot be reached": (
        'good = "good.txt"\nbad = "bad.txt"\nindex_url = "http://127.0.0.1:9/simple"',
        "cannot list the releases of slowlib",
        "[stack] wheels: a folder searched first; index_url: another index",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_stack_that_cannot_be_built_is_one_line(tmp_path: Path, case: str) -> None:
    stack, *says = CASES[case]
    repo = make_repo(tmp_path)
    wheels = repo / "wheels"
    wheels.mkdir()
    (wheels / "slowlib-1.0-py3-none-any.whl").write_bytes(b"")  # check reads names only
    (repo / "uv.lock").write_bytes(b"[[package]\n\xff")
    (repo / "good.txt").write_text("slowlib==1.0\n")
    (repo / "bad.txt").write_text("slowlib==9.9\n")
    (repo / "debug-agent.toml").write_text(
        textwrap.dedent("""\
            [bench]
            kind = "command"
            command = "{python} -c 'print(1)'"
            metric = "latency_ms"
            metric_regex = "([0-9]+)"
            [stack]
            """)
        + stack
        + "\n"
    )
    assert_one_line_error(run_cli("check", cwd=repo), "stack", *says)
    investigated = run_cli("investigate", "--symptom", "latency_ms 5 (was 1)", cwd=repo)
    assert_one_line_error(investigated, "stack", *says)
