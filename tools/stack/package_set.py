"""A package set: which distribution is at which version, read from what users have at hand.

`pip freeze` output, a requirements file with `==` pins (extras, markers, hashes and line
continuations as pip takes them), a `uv.lock`, or a `pylock.toml` (PEP 751). Names are
canonical (PEP 503), versions parsed as PEP 440 says (`packaging`): `Torch==2.9.0+cu128` and
`torch==2.9.0+cu128` are one package at one version. A line pinned by something other than a
version (`pkg @ https://…`, `-e git+…`) is kept as that reference: two sets differ there when
the references differ. Anything that does not name an exact version is an error naming the
file and line, never a guess.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel

from tools.bounded_read import NotAFile, read_regular
from tools.errors import ToolError
from tools.toml_text import parse_toml


class PackageSetError(ToolError):
    pass


class PackageSet(BaseModel):
    source: str  # the file it was read from, as the user named it
    versions: dict[str, str]  # canonical name -> version (PEP 440, as written)
    references: dict[str, str] = {}  # canonical name -> a URL or VCS reference in place of one

    def pinned(self, name: str) -> str | None:
        return self.versions.get(name) or self.references.get(name)


MAX_SET_BYTES = 32 << 20  # a uv.lock of thousands of packages is a few MB
MAX_INCLUDE_DEPTH = 100  # `-r` files in `-r` files: a real set has two or three levels


def read_package_set(path: Path) -> PackageSet:
    """The package set in `path`, by its name: uv.lock, pylock*.toml, else freeze/requirements."""
    text = _text(path)
    if path.name == "uv.lock" or (path.name.startswith("pylock") and path.suffix == ".toml"):
        found = _from_lock(path, text)
    else:
        found = _from_requirements(path, text, {path.resolve()})
    if not found.versions and not found.references:
        raise PackageSetError(f"{path} names no package: a package set is `pip freeze` output")
    return found


def _text(path: Path) -> str:
    """A regular file's text: a pipe (`<(pip freeze)`) is gone when a resumed session reads it
    again, a FIFO with no writer blocks, /dev/zero never ends."""
    try:
        data = read_regular(path, MAX_SET_BYTES)
    except OSError as e:
        raise PackageSetError(f"cannot read the package set {path}: {_why(e)}") from None
    except NotAFile as e:
        raise PackageSetError(
            f"{e}: a session reads its package sets again when it is resumed; write the set "
            "to a file (pip freeze > good.txt)"
        ) from None
    try:
        return data.decode("utf-8-sig")  # PowerShell's `pip freeze > f` writes a BOM
    except UnicodeDecodeError:
        raise PackageSetError(f"{path} is not UTF-8 text: not a package set") from None


def _why(e: BaseException) -> str:
    return e.strerror if isinstance(e, OSError) and e.strerror else str(e)


def _from_lock(path: Path, text: str) -> PackageSet:
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError as e:
        raise PackageSetError(f"{path} is not valid TOML: {e}") from None
    # uv.lock: [[package]]; pylock.toml: [[packages]]
    entries = data.get("package") if path.name == "uv.lock" else data.get("packages")
    if not isinstance(entries, list):
        raise PackageSetError(f"{path} lists no packages ([[package]] or [[packages]])")
    found = PackageSet(source=str(path), versions={})
    for number, entry in enumerate(entries, 1):
        name, version = (
            (entry.get("name"), entry.get("version")) if isinstance(entry, dict) else (None, None)
        )
        if not isinstance(name, str) or not name:
            raise PackageSetError(f"{path}: package {number} has no name")
        source = entry.get("source") or {}
        if isinstance(source, dict) and ("editable" in source or "virtual" in source):
            continue  # the project itself (uv.lock's own entry): not a dependency of it
        if not isinstance(version, str):
            where = source.get("git") or source.get("url") if isinstance(source, dict) else None
            if not where:
                raise PackageSetError(f"{path}: {name} has no version")
            found.references[canonicalize_name(name)] = str(where)
            continue
        _add(found, name, version, f"{path}: {name}")
    return found


def _from_requirements(path: Path, text: str, read: set[Path], depth: int = 0) -> PackageSet:
    found = PackageSet(source=str(path), versions={})
    for number, line in _logical_lines(text):
        where = f"{path}:{number}"
        if included := _included(line):  # pip reads `-r other.txt` beside the file naming it
            other = path.parent / included
            if depth == MAX_INCLUDE_DEPTH:  # 3,000 deep was a RecursionError
                raise PackageSetError(f"{where}: -r files nested over {depth} deep")
            if other.resolve() not in read:  # one read is enough: a loop adds nothing
                read.add(other.resolve())
                _merge(found, _from_requirements(other, _text(other), read, depth + 1), where)
            continue
        if line.startswith("-e ") or line.startswith("--editable"):
            target = line.split(None, 1)[1] if " " in line else line
            name = target.rpartition("#egg=")[2] if "#egg=" in target else None
            if name:
                found.references[canonicalize_name(name)] = target
            continue  # an editable install without a name is the project under study
        if line.startswith("-"):
            continue  # pip options (--index-url, --hash, -c ...): not a package
        line = line.split(" --hash", 1)[0].strip()
        try:
            req = Requirement(line)
        except InvalidRequirement as e:
            why = str(e).splitlines()[0]
            raise PackageSetError(f"{where}: not a requirement: {line!r} ({why})") from None
        if req.marker is not None and not req.marker.evaluate():
            continue  # for another Python or platform: not in this environment
        if req.url:
            found.references[canonicalize_name(req.name)] = req.url
            continue
        pins = [s for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
        if len(pins) != 1 or len(req.specifier) != 1:
            raise PackageSetError(
                f"{where}: {line!r} is not pinned to one version (name==version): a package "
                "set names exact versions, as `pip freeze` writes them"
            )
        _add(found, req.name, pins[0].version, where)
    return found


def _included(line: str) -> str | None:
    """The file a `-r FILE`, `-rFILE`, `--requirement FILE` or `--requirement=FILE` names."""
    for flag in ("--requirement", "-r"):
        if line.startswith(flag):
            rest = line[len(flag) :].lstrip("=" if flag.startswith("--") else "").strip()
            return rest or None
    return None


def _merge(found: PackageSet, other: PackageSet, where: str) -> None:
    for name, version in other.versions.items():
        _add(found, name, version, where)
    found.references.update(other.references)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) with comments cut and `\\` continuations joined."""
    lines: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = (pending + line).strip(), ""
        if line:
            lines.append((start, line))
    if pending.strip():
        lines.append((start, pending.strip()))
    return lines


def _add(found: PackageSet, name: str, version: str, where: str) -> None:
    try:
        Version(version)
    except InvalidVersion:
        raise PackageSetError(f"{where}: {version!r} is not a version (PEP 440)") from None
    key = canonicalize_name(name)
    if key in found.versions and found.versions[key] != version:
        raise PackageSetError(
            f"{where}: {name} is pinned twice, to {found.versions[key]} and {version}"
        )
    found.versions[key] = version


INSTALLED = (
    "import importlib.metadata as m, json; "
    "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions() "
    "if d.metadata['Name']}))"
)


def installed_package_set(python: str, timeout_s: float = 60.0) -> PackageSet:
    """The distributions the interpreter `python` sees now (the launch's environment)."""
    try:
        done = subprocess.run(
            [python, "-c", INSTALLED], capture_output=True, text=True, timeout=timeout_s
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise PackageSetError(f"cannot ask {python} what it has installed: {_why(e)}") from None
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise PackageSetError(f"cannot ask {python} what it has installed: {last}")
    found = PackageSet(source=f"the environment of {python}", versions={})
    try:
        installed = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise PackageSetError(f"{python} did not say what it has installed") from None
    for name, version in sorted(installed.items()):
        _add(found, name, version, f"{python}: {name}")
    return found
