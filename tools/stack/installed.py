"""The distributions installed in an environment of ours, read by the standard library
(importlib.metadata: each one's name, RECORD and Requires-Dist), for what the launches loaded,
a package's own files and the pins between packages."""

from __future__ import annotations

from importlib.metadata import Distribution, distributions
from pathlib import Path

from packaging.utils import canonicalize_name


def installed(env_folder: Path) -> list[tuple[str, Distribution]]:
    """(canonical name, distribution) for each distribution in the environment's site-packages."""
    sites = [str(site) for site in sorted(env_folder.glob("lib/python*/site-packages"))]
    found: list[tuple[str, Distribution]] = []
    for dist in distributions(path=sites):
        name = dist.metadata["Name"] if dist.metadata else None
        if name:
            found.append((canonicalize_name(name), dist))
    return found


def site_of(dist: Distribution) -> Path:
    """The folder a distribution's RECORD paths are relative to (its site-packages)."""
    return Path(str(dist.locate_file(""))).resolve()
