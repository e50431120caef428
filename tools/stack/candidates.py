"""A [stack]'s package changes as candidates, beside the hunks, env vars and args: one
investigation over the whole difference.

A package candidate holds the package's good and bad pins (a version, a URL, or None where the
set lacks it). A state holds a candidate's bad pin when it holds the candidate, its good one
otherwise: `state_pins` gives a state's whole set from the bad set and the candidates it does
not hold.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tools.config import StackSection, TargetConfig
from tools.repo.candidates import Candidate
from tools.stack.difference import PackageChange, package_changes
from tools.stack.environment import Sources
from tools.stack.package_set import PackageSet, installed_package_set, read_package_set
from tools.stack.releases import (
    ReleasesError,
    between,
    index_url,
    releases_in_folder,
    releases_on_index,
)

PACKAGE_PREFIX = "pkg-"
CURRENT = "current"


def stack_sets(config: TargetConfig, config_dir: Path) -> tuple[PackageSet, PackageSet]:
    """The good and bad package sets a [stack] names (errors: one line, PackageSetError)."""
    assert config.stack is not None
    return _read(config.stack.good, config, config_dir), _read(config.stack.bad, config, config_dir)


def _read(where: str, config: TargetConfig, config_dir: Path) -> PackageSet:
    if where == CURRENT:
        return installed_package_set(config.python)
    return read_package_set(config_dir / where)


def stack_candidates(
    good: PackageSet, bad: PackageSet, source: str, where: Sources | None = None
) -> list[Candidate]:
    """One candidate per package change, with the releases between its two versions where
    `where` (the wheel folder, else the index) can say."""
    changes = package_changes(good, bad)
    between = releases_between([c for c in changes if c.move in MOVES], where)
    return [
        Candidate(
            id=PACKAGE_PREFIX + change.name,
            kind="package",
            name=change.name,
            good=change.good,
            bad=change.bad,
            origin=source,
            releases=between.get(change.name),
        )
        for change in changes
    ]


MOVES = ("upgraded", "downgraded")  # two versions: releases lie between them


def releases_between(changes: list[PackageChange], where: Sources | None) -> dict[str, list[str]]:
    """Each change's releases strictly between its versions, from where uv would take them
    (the wheel folder and, unless offline, the index); a change that cannot be listed (the
    index out of reach) is left out: not known."""
    found: dict[str, list[str]] = {}
    if where is None:
        return found
    for change in changes:
        assert change.good is not None and change.bad is not None
        try:
            versions = (
                releases_in_folder(Path(where.wheels), change.name) if where.wheels else set()
            )
            if not where.offline:
                versions |= releases_on_index(index_url(where.index_url), change.name, timeout_s=15)
        except ReleasesError:
            continue
        found[change.name] = between(versions, change.good, change.bad)
    return found


def bad_pins(bad: PackageSet) -> dict[str, str]:
    return {**bad.references, **bad.versions}


def state_pins(bad: dict[str, str], not_held: Iterable[Candidate]) -> dict[str, str]:
    """The set of a state that holds every package change but `not_held` (at their good pins)."""
    pins = dict(bad)
    for c in not_held:
        if c.kind != "package" or c.name is None:
            continue
        pins.pop(c.name, None)
        if c.good is not None:
            pins[c.name] = c.good
    return pins


def sources(stack: StackSection, config_dir: Path) -> Sources:
    wheels = str((config_dir / stack.wheels).resolve()) if stack.wheels else None
    return Sources(wheels=wheels, index_url=stack.index_url, offline=stack.offline)
