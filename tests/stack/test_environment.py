"""Package sets built as environments by uv, from a wheel folder with no index: each set once,
a set whose pins break each other unresolved, a version that does not exist one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.stack.wheels import Wheel, make_wheels
from tools.stack.environment import Sources, Unresolved, build_environment


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("wheels")
    folder = base / "wheels"
    # pairlib's release pins slowlib's exact version: the two move together
    specs = [Wheel("slowlib", "1.0"), Wheel("slowlib", "1.1")]
    make_wheels(folder, [*specs, Wheel("pairlib", "2.0", requires="slowlib==1.1")])
    return folder


def version_in(python: str, module: str) -> str:
    done = subprocess.run(
        [python, "-c", f"import {module}; print({module}.VERSION)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_each_set_is_built_once_and_holds_exactly_its_pins(wheels: Path, tmp_path: Path) -> None:
    offline = Sources(wheels=str(wheels), offline=True)
    root = tmp_path / "envs"
    first = build_environment({"slowlib": "1.0"}, root, sys.executable, offline)
    assert not first.cached and version_in(first.python, "slowlib") == "1.0"
    again = build_environment({"slowlib": "1.0"}, root, sys.executable, offline)
    assert again.cached and again.folder == first.folder
    other = build_environment({"slowlib": "1.1", "pairlib": "2.0"}, root, sys.executable, offline)
    assert other.folder != first.folder and version_in(other.python, "pairlib") == "2.0"
    # a cut-short build (no marker) is built anew, not trusted
    (Path(first.folder) / ".debug-agent-built").unlink()
    assert not build_environment({"slowlib": "1.0"}, root, sys.executable, offline).cached


def test_pins_that_break_each_other_are_unresolved_every_time(wheels: Path, tmp_path: Path) -> None:
    offline = Sources(wheels=str(wheels), offline=True)
    for _ in range(2):  # the second answer comes from the kept verdict
        with pytest.raises(Unresolved, match="check the set.*slowlib") as error:
            build_environment(
                {"slowlib": "1.0", "pairlib": "2.0"}, tmp_path / "envs", sys.executable, offline
            )
        assert "\n" not in str(error.value)


def test_a_version_that_does_not_exist_and_no_source_at_all(wheels: Path, tmp_path: Path) -> None:
    with pytest.raises(Unresolved, match="install the set.*slowlib") as error:
        build_environment(
            {"slowlib": "9.9"},
            tmp_path / "e",
            sys.executable,
            Sources(wheels=str(wheels), offline=True),
        )
    assert "\n" not in str(error.value)
    with pytest.raises(Unresolved, match="install the set"):
        build_environment({"slowlib": "1.0"}, tmp_path / "e", sys.executable, Sources(offline=True))
    with pytest.raises(Unresolved, match="cannot run the base Python"):
        build_environment({"slowlib": "1.0"}, tmp_path / "e", str(tmp_path / "none"), Sources())
