"""A package's source at two of its releases, as a git repository of our own: the files each
release installed (its RECORD in an environment already built), one commit each. The hunks
between the two commits are the candidates of the search inside the first slow release; a
state of that search is the later release's installed copy with the package's files patched,
put in front of it on PYTHONPATH.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from packaging.utils import canonicalize_name

from tools.errors import ToolError
from tools.folders import cache_dir
from tools.stack.installed import installed, site_of

LEFT_OUT = (".dist-info/", "__pycache__/")


def package_files(env_folder: Path, name: str) -> dict[str, Path]:
    """The files distribution `name` installed in `env_folder`, by their path in site-packages
    (its metadata, scripts and byte code left out)."""
    wanted = canonicalize_name(name)
    for found, dist in installed(env_folder):
        if found != wanted:
            continue
        site = site_of(dist)
        paths = [str(path) for path in dist.files or []]
        return {
            path: site / path
            for path in paths
            if not path.startswith("..")
            and not path.endswith(".pyc")
            and not any(part in path for part in LEFT_OUT)
            and (site / path).is_file()
        }
    raise ToolError(f"{name} is not installed in {env_folder}")


def release_folder(package: str, before: str, slow: str) -> Path:
    """Where the repository of `package`'s two releases is kept (made once, reused)."""
    return cache_dir() / "sources" / f"{package}-{before}-{slow}"


def release_shas(folder: Path) -> list[str]:
    """The commits of a repository `release_repo` made, oldest first; none if it is not made."""
    made = folder / ".git" / "debug-agent-releases"
    return made.read_text().split() if made.is_file() else []


def release_repo(folder: Path, releases: list[tuple[str, dict[str, Path]]]) -> list[str]:
    """`folder` made a git repository holding each release's files in one commit, in order;
    the commits' shas. Made once: a folder that holds them already is read as it is."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false", *args],
            cwd=folder,
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise ToolError(f"git {args[0]} in {folder}: {done.stderr.strip()}")
        return done.stdout.strip()

    if shas := release_shas(folder):
        return shas
    shutil.rmtree(folder, ignore_errors=True)  # one cut short
    folder.mkdir(parents=True)
    git("init", "-q", "-b", "main")
    shas = []
    for release, files in releases:
        for old in folder.iterdir():
            if old.name != ".git":
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        try:
            for path, source in files.items():
                (folder / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, folder / path)
        except OSError as e:
            why = e.strerror or e
            raise ToolError(f"cannot copy {release}'s files to {folder}: {why}") from None
        # the index forgotten: a file of the same size, time and (reused) inode as the one it
        # replaced would read as unchanged to git's stat check, and the release lose its change
        (folder / ".git" / "index").unlink(missing_ok=True)
        git("add", "-A")
        identity = ["-c", "user.name=debug-agent", "-c", "user.email=debug-agent@localhost"]
        git(*identity, "commit", "-q", "--allow-empty", "-m", release)
        shas.append(git("rev-parse", "HEAD"))
    (folder / ".git" / "debug-agent-releases").write_text(" ".join(shas) + "\n")
    return shas
