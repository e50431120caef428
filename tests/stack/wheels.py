"""Real wheels of small packages, written at test time (no index, no build backend): pypa's
`wheel` library writes the archive and its RECORD; pip and uv install them as any other."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from wheel.wheelfile import WheelFile


class Wheel(NamedTuple):
    name: str
    version: str
    requires: str = ""  # one requirement, e.g. "other==1.0"
    code: str = ""  # the module's code after VERSION


def make_wheels(wheels: Path, specs: list[Wheel]) -> None:
    """A wheel of a one-module package (`VERSION`, then `code`) for each spec."""
    wheels.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        info = f"{spec.name}-{spec.version}.dist-info"
        requires = f"Requires-Dist: {spec.requires}\n" if spec.requires else ""
        with WheelFile(wheels / f"{spec.name}-{spec.version}-py3-none-any.whl", "w") as out:
            out.writestr(f"{spec.name}/__init__.py", f"VERSION = {spec.version!r}\n{spec.code}")
            out.writestr(
                f"{info}/METADATA",
                f"Metadata-Version: 2.1\nName: {spec.name}\nVersion: {spec.version}\n{requires}",
            )
            out.writestr(
                f"{info}/WHEEL",
                "Wheel-Version: 1.0\nGenerator: debug-agent-tests\nRoot-Is-Purelib: true\n"
                "Tag: py3-none-any\n",
            )
