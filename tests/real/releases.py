"""Real releases of a PyPI project as a git history: one commit (tagged `vVERSION`) per release,
the package's source folder only, as the project published it (wheel or sdist), downloaded with
pip. The working tree can hold a later release uncommitted: the regression under study."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

from tests.conftest import sh


class DownloadError(RuntimeError):
    """pip could not fetch a release (the registry unreachable, the version gone)."""


Pin = tuple[str, str]  # (PyPI project, version)


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _cached(pin: Pin, cache: Path) -> Path | None:
    folder = cache / f"{_canonical(pin[0])}-{pin[1]}"
    archives = sorted(folder.iterdir()) if folder.is_dir() else []
    return archives[0] if len(archives) == 1 else None


def _pip_download(pins: Sequence[Pin], cache: Path) -> None:
    """One pip run for `pins` (one version per project), each archive filed under its pin."""
    cache.mkdir(parents=True, exist_ok=True)
    # an sdist's metadata is built on download: with setuptools at hand, without a build env
    isolation = ["--no-build-isolation"] if importlib.util.find_spec("setuptools") else []
    with tempfile.TemporaryDirectory(prefix=".partial-", dir=cache) as partial:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", *isolation]
            + ["--dest", partial, *(f"{project}=={version}" for project, version in pins)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            wanted = " ".join(f"{p}=={v}" for p, v in pins)
            said = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
            raise DownloadError(f"pip download {wanted}: {(said or ['failed'])[-1]}")
        for archive in Path(partial).iterdir():
            project, version = next(
                pin for pin in pins if _canonical(archive.name).startswith(_canonical(pin[0]) + "_")
            )
            folder = cache / f"{_canonical(project)}-{version}"
            folder.mkdir(exist_ok=True)
            archive.rename(folder / archive.name)


def download_all(pins: Sequence[Pin], cache: Path) -> list[Path]:
    """The releases' archives (a wheel where PyPI has one), downloaded into `cache` once: as
    few pip runs as one version per project per run allows, side by side (pip mostly waits)."""
    rounds: list[list[Pin]] = []
    for pin in dict.fromkeys(pins):
        if _cached(pin, cache) is None:
            free = [r for r in rounds if all(p[0] != pin[0] for p in r)]
            if free:
                free[0].append(pin)
            else:
                rounds.append([pin])
    with ThreadPoolExecutor(max_workers=min(max(len(rounds), 1), 4)) as pool:
        list(pool.map(lambda pins_of_round: _pip_download(pins_of_round, cache), rounds))
    archives = [_cached(pin, cache) for pin in pins]
    missing = [f"{p}=={v}" for (p, v), a in zip(pins, archives, strict=True) if a is None]
    if missing:
        raise DownloadError(f"pip download gave no single archive for {', '.join(missing)}")
    return [a for a in archives if a is not None]


def _members(archive: Path) -> list[tuple[PurePosixPath, bytes]]:
    """Every regular file of a wheel or an sdist, path and bytes."""
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as wheel:
            return [
                (PurePosixPath(info.filename), wheel.read(info))
                for info in wheel.infolist()
                if not info.is_dir()
            ]
    with tarfile.open(archive) as sdist:
        files = []
        for member in sdist.getmembers():
            extracted = sdist.extractfile(member) if member.isfile() else None
            if extracted is not None:  # an sdist's paths start with its NAME-VERSION/ folder
                files.append(
                    (PurePosixPath(*PurePosixPath(member.name).parts[1:]), extracted.read())
                )
        return files


def unpack_package(archive: Path, package: str, dest: Path) -> None:
    """Write the archive's `package` folder (sources only) to `dest/package`, replacing it."""
    shutil.rmtree(dest / package, ignore_errors=True)
    found = False
    for path, data in _members(archive):
        if path.parts[0] != package or path.suffix in (".pyc", ".so", ".pyd"):
            continue
        target = dest.joinpath(*path.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        found = True
    if not found:
        raise DownloadError(f"{archive.name} has no {package}/ folder")


def unpack_dependencies(archives: Sequence[Path], packages: Sequence[str], dest: Path) -> Path:
    """Import-only dependencies of a release (not under study) in one folder for sys.path."""
    dest.mkdir(parents=True, exist_ok=True)
    for archive in archives:
        for path, data in _members(archive):
            if path.parts[0] in packages or (len(path.parts) == 1 and path.stem in packages):
                target = dest.joinpath(*path.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
    return dest


def release_history(
    repo: Path, project: str, package: str, committed: Sequence[str], slow: str, cache: Path
) -> Path:
    """A repository at `repo` with one commit per release in `committed` (oldest first, tag
    `vVERSION`), and release `slow` in the working tree, uncommitted."""
    archives = download_all([(project, v) for v in [*committed, slow]], cache)
    repo.mkdir(parents=True)
    sh(repo, "git", "init", "-q", "-b", "main")
    sh(repo, "git", "config", "user.email", "releases@example.invalid")
    sh(repo, "git", "config", "user.name", "releases")
    (repo / ".gitignore").write_text("__pycache__/\n*.pyc\n")
    for version, archive in zip(committed, archives, strict=False):
        unpack_package(archive, package, repo)
        sh(repo, "git", "add", "-A")
        sh(repo, "git", "commit", "-qm", f"{project} {version}")
        sh(repo, "git", "tag", f"v{version}")
    unpack_package(archives[-1], package, repo)
    return repo
