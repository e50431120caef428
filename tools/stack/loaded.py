"""Which distributions of an environment a launch loaded: the files its processes reported
(modules, extension modules, mapped shared libraries: tools/proc/hooks) against each installed
distribution's RECORD. A package none of whose files any process loaded did not run."""

from __future__ import annotations

import csv
import os
from pathlib import Path

from packaging.utils import canonicalize_name

from tools.proc.import_trace import BUILD
from tools.stack.environment import BuiltEnvironment


def distribution_files(env_folder: Path) -> dict[Path, str]:
    """Every file an installed distribution holds (resolved) -> its canonical name."""
    owners: dict[Path, str] = {}
    for record in env_folder.glob("lib/python*/site-packages/*.dist-info/RECORD"):
        # the folder resolved once; its files by name (torch's RECORD has some 15,000 lines)
        site, name = record.parent.parent.resolve(), _name(record.parent)
        try:
            rows = list(csv.reader(record.read_text(errors="replace").splitlines()))
        except csv.Error:
            continue  # a damaged RECORD: its files stay unattributed
        for row in rows:
            if row and row[0]:
                owners[Path(os.path.normpath(site / row[0]))] = name
    return owners


def _name(dist_info: Path) -> str:
    """From METADATA's Name, else the folder's name before its version."""
    metadata = dist_info / "METADATA"
    if metadata.is_file():
        for line in metadata.read_text(errors="replace").splitlines():
            if line.lower().startswith("name:"):
                return canonicalize_name(line.split(":", 1)[1].strip())
            if not line.strip():
                break
    return canonicalize_name(dist_info.name.removesuffix(".dist-info").rsplit("-", 1)[0])


def loaded_distributions(trace_dir: Path, environment: BuiltEnvironment) -> list[str]:
    """The distributions of `environment` that some traced process loaded a file of."""
    owners = distribution_files(Path(environment.folder))
    loaded: set[str] = set()
    for report in [*trace_dir.glob("*.txt"), *(trace_dir / BUILD).glob("*.txt")]:
        for line in report.read_text(errors="replace").splitlines()[1:]:
            try:
                owner = owners.get(Path(line).resolve())
            except (OSError, ValueError, RuntimeError):
                continue
            if owner:
                loaded.add(owner)
    return sorted(loaded)
