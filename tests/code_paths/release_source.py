"""A real SGLang or vLLM release's source, downloaded at test time (`pip download sglang==X
--no-deps`, never committed): its Python files, unpacked from the wheel. One download per
release and test run, shared by the suite's workers (a lock per release in the run's common
folder)."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path


def download(version: str, folder: Path, package: str = "sglang") -> Path:
    """The Python files of `package` (SGLang, or vLLM: its wheel holds compiled kernels too,
    which are left in the wheel) `version`, unpacked under `folder`/source."""
    source = folder / "source"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (source / ".complete").exists():
            return source
        wheels = folder / "wheel"
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"{package}=={version}", "--no-deps", "-q"]
            + ["-d", str(wheels)],
            check=True,
            timeout=600,
        )
        wheel = next(wheels.glob(f"{package}-{version}-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            z.extractall(
                source,
                [n for n in z.namelist() if n.startswith(f"{package}/") and n.endswith(".py")],
            )
        wheel.unlink()  # vLLM's is hundreds of MB
        (source / ".complete").write_text("")
    return source


def shared_folder(basetemp: Path) -> Path:
    """The folder every worker of this test run sees (xdist gives each its own basetemp)."""
    return basetemp.parent if basetemp.name.startswith("popen-gw") else basetemp


@dataclass
class Score:
    """How `paths` did on a release's configurations against their truth."""

    files: int = 0
    decided: int = 0
    right: int = 0
    wrong: list[tuple[str, str, str]] = field(default_factory=list)  # case, file, status

    def add(self, case: str, truth: dict[str, str], found: dict[str, dict]) -> None:
        """One configuration's verdicts; a file the server runs called off fails at once."""
        for path, expected in truth.items():
            status = found[path]["status"]
            assert not (expected == "on" and status == "off"), (case, found[path])
            self.files += 1
            self.decided += status != "unknown"
            self.right += status == expected
            if status not in (expected, "unknown"):
                self.wrong.append((case, path, status))
