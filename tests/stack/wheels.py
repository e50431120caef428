"""Real wheels of small packages, built at test time (no index needed): as few pip calls as
can hold them (pip's start-up, not the build, is most of a wheel's cost)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple


class Wheel(NamedTuple):
    name: str
    version: str
    requires: str = ""  # one requirement, e.g. "other==1.0"
    code: str = ""  # the module's code after VERSION


def make_wheels(src: Path, wheels: Path, specs: list[Wheel]) -> None:
    """A real wheel of a one-module package for each spec, built by pip from its own
    pyproject.toml."""
    folders = []
    for spec in specs:
        folder = src / f"{spec.name}-{spec.version}"
        (folder / spec.name).mkdir(parents=True)
        (folder / spec.name / "__init__.py").write_text(f"VERSION = {spec.version!r}\n{spec.code}")
        deps = f"dependencies = [{spec.requires!r}]" if spec.requires else ""
        (folder / "pyproject.toml").write_text(
            textwrap.dedent(f"""\
                [build-system]
                requires = ["setuptools"]
                build-backend = "setuptools.build_meta"
                [project]
                name = "{spec.name}"
                version = "{spec.version}"
                {deps}
                """)
        )
        folders.append((spec.name, str(folder)))
    # pip resolves one call's packages together: two versions of one name go to two calls
    calls: list[dict[str, str]] = []
    for name, folder in folders:
        call = next((c for c in calls if name not in c), None)
        if call is None:
            calls.append(call := {})
        call[name] = folder
    for call in calls:
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps"]
            + ["-w", str(wheels), *call.values()],
            check=True,
            capture_output=True,
        )
