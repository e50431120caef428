"""Real wheels of small packages, built at test time (no index needed)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def make_wheel(
    src: Path, wheels: Path, name: str, version: str, requires: str = "", code: str = ""
) -> None:
    """A real wheel of a one-module package (VERSION, then `code`), built by pip from its own
    pyproject.toml."""
    folder = src / f"{name}-{version}"
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text(f"VERSION = {version!r}\n{code}")
    deps = f"dependencies = [{requires!r}]" if requires else ""
    (folder / "pyproject.toml").write_text(
        textwrap.dedent(f"""\
            [build-system]
            requires = ["setuptools"]
            build-backend = "setuptools.build_meta"
            [project]
            name = "{name}"
            version = "{version}"
            {deps}
            """)
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps"]
        + ["-w", str(wheels), str(folder)],
        check=True,
        capture_output=True,
    )
