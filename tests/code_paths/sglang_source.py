"""A real SGLang release's source, downloaded at test time (`pip download sglang==X --no-deps`,
never committed): its Python files, unpacked from the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path


def download(version: str, folder: Path) -> Path:
    """The Python files of SGLang `version`, unpacked under `folder`/source."""
    wheels = folder / "wheel"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", f"sglang=={version}", "--no-deps", "-q"]
        + ["-d", str(wheels)],
        check=True,
        timeout=600,
    )
    wheel = next(wheels.glob(f"sglang-{version}-*.whl"))
    source = folder / "source"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(
            source, [n for n in z.namelist() if n.startswith("sglang/") and n.endswith(".py")]
        )
    return source
