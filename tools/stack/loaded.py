"""Which distributions of an environment a launch loaded: the files its processes reported
(modules, extension modules, mapped shared libraries: tools/proc/hooks) against each installed
distribution's RECORD. A package none of whose files any process loaded did not run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePath, PurePosixPath

from tools.proc.import_trace import BUILD
from tools.stack.installed import installed, site_of


def distribution_files(env_folder: Path) -> dict[Path, str]:
    """Every file an installed distribution holds (resolved) -> its canonical name."""
    owners: dict[Path, str] = {}
    for name, dist in installed(env_folder):
        # the folder resolved once; its files by name (torch's RECORD has some 15,000 lines)
        site = site_of(dist)
        for path in dist.files or []:
            owners[Path(os.path.normpath(site / str(path)))] = name
    return owners


def loaded_distributions(
    trace_dir: Path, owners: Mapping[PurePath, str], local: bool = True
) -> list[str]:
    """The distributions that some traced process loaded a file of: `owners` maps each file
    of the launch's environment to its distribution (on a node, the node's paths: they are
    compared as written, not resolved here)."""
    loaded: set[str] = set()
    for report in [*trace_dir.glob("*.txt"), *(trace_dir / BUILD).glob("*.txt")]:
        for line in report.read_text(errors="replace").splitlines()[1:]:
            try:
                path = Path(line).resolve() if local else PurePosixPath(os.path.normpath(line))
                owner = owners.get(path)
            except (OSError, ValueError, RuntimeError):
                continue
            if owner:
                loaded.add(owner)
    return sorted(loaded)
