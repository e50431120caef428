"""What moved between a good and a bad package set: one change per distribution."""

from __future__ import annotations

from typing import Literal

from packaging.version import Version
from pydantic import BaseModel

from tools.stack.package_set import PackageSet

Move = Literal["upgraded", "downgraded", "added", "removed", "replaced"]


class PackageChange(BaseModel):
    name: str  # canonical
    good: str | None  # a version, a reference, or None (not in the good set)
    bad: str | None
    move: Move

    def describe(self) -> str:
        if self.move == "added":
            return f"{self.name} {self.bad} added"
        if self.move == "removed":
            return f"{self.name} {self.good} removed"
        return f"{self.name} {self.good} -> {self.bad} ({self.move})"


def package_changes(good: PackageSet, bad: PackageSet) -> list[PackageChange]:
    """Every distribution whose version or reference differs, by name."""
    changes = []
    for name in sorted(
        set(good.versions) | set(good.references) | set(bad.versions) | set(bad.references)
    ):
        before, after = good.pinned(name), bad.pinned(name)
        if before == after or _same_version(good, bad, name):
            continue
        changes.append(
            PackageChange(name=name, good=before, bad=after, move=_move(good, bad, name))
        )
    return changes


def _same_version(good: PackageSet, bad: PackageSet, name: str) -> bool:
    """1.0 and 1.0.0 are one version (PEP 440), as pip installs them."""
    if name in good.versions and name in bad.versions:
        return Version(good.versions[name]) == Version(bad.versions[name])
    return False


def _move(good: PackageSet, bad: PackageSet, name: str) -> Move:
    before, after = good.pinned(name), bad.pinned(name)
    if before is None:
        return "added"
    if after is None:
        return "removed"
    if name in good.versions and name in bad.versions:
        # 2.9.0+cu128 and 2.9.0+cu126 compare unequal and ordered by their local part
        return "upgraded" if Version(after) > Version(before) else "downgraded"
    return "replaced"  # a version against a URL or VCS reference: not ordered
