"""Pins between packages: a release that requires a version of another package which the other
side's set does not hold. Such packages move together: a state with one moved alone does not
hold together (`uv pip check` refuses it), so the search is told before it tries."""

from __future__ import annotations

from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel

from tools.repo.candidates import Candidate
from tools.stack.installed import installed


class PackageLink(BaseModel):
    a: str  # candidate ids
    b: str
    reason: str
    when: str  # "apply": a at its bad version needs b's bad; "revert": a's good needs b's good


def requirements(env_folder: Path) -> dict[str, list[str]]:
    """Each installed distribution's Requires-Dist (those its markers keep, without extras)."""
    found: dict[str, list[str]] = {}
    for name, dist in installed(env_folder):
        kept = []
        for text in dist.requires or []:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue  # a malformed line of someone's metadata: not a pin we can read
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                kept.append(str(req))
        found[name] = kept
    return found


def _satisfies(req: Requirement, pin: str) -> bool:
    """A URL or VCS reference in place of a version satisfies nothing it can be checked by."""
    try:
        return req.specifier.contains(Version(pin), prereleases=True)
    except InvalidVersion:
        return True  # not known to break it: no link claimed


def package_links(
    candidates: list[Candidate], bad: dict[str, list[str]], good: dict[str, list[str]]
) -> list[PackageLink]:
    """For each package change a whose release requires a version of another changed package
    b that b's other side does not satisfy: a link (a needs b moved with it)."""
    packages = {c.name: c for c in candidates if c.kind == "package" and c.name}
    links = []
    for side, requires, when in (("bad", bad, "apply"), ("good", good, "revert")):
        for a in packages.values():
            version = a.bad if side == "bad" else a.good
            for text in requires.get(a.name or "", []) if version else []:
                req = Requirement(text)
                b = packages.get(canonicalize_name(req.name))
                other = None if b is None else (b.good if side == "bad" else b.bad)
                if b is None or b is a or other is None or _satisfies(req, other):
                    continue
                links.append(
                    PackageLink(
                        a=a.id,
                        b=b.id,
                        reason=f"{a.name} {version} requires {req}, which {b.name} {other} "
                        "is not: the two move together",
                        when=when,
                    )
                )
    return links
