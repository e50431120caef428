"""A package's own git history between two of its releases, where `[stack] repos` names the
project's repository: the commits inside its first slow release, searched as a range's are.

The repository is cloned once into the cache (a URL, a path or a git bundle; the user's own
clone is only read). Each release is the commit a tag names for its version (`1.2`, `v1.2`,
`name-1.2`, `release-1.2`). The installed package maps onto the tree through one folder (the
repository root, `src/`, `lib/`): the folder under which every file the slow release installed
lies at the same path. A state puts that folder of a scratch worktree first on PYTHONPATH, in
front of the installed copy; so a release that installs files its tree lacks (compiled or
generated at build time) cannot be read this way, and its release files are compared instead.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from tools.errors import ToolError
from tools.folders import cache_dir
from tools.repo.candidates import CandidateSet, commit_changes
from tools.repo.worktree import open_repo

_TRAILING_VERSION = re.compile(r"(\d[\w.!+]*)$")
GIT_TIMEOUT_S = 600


def history_clone(source: str, config_dir: Path) -> Path:
    """Our clone of the package's repository `source` (a URL, or a path or bundle from the
    config's folder), made once; its working tree is never checked out."""
    local = config_dir / source
    where = str(local.resolve()) if "://" not in source and local.exists() else source
    digest = hashlib.sha256(os.fsencode(where)).hexdigest()[:16]
    folder = cache_dir() / "history" / digest
    if (folder / ".git" / "debug-agent-cloned").is_file():
        return folder
    shutil.rmtree(folder, ignore_errors=True)  # one cut short
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", "clone", "-q", "--no-checkout", where]
            + [str(folder)],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            # a source that asks for a password fails at once, with git's reason: a prompt on
            # the terminal mid-investigation would wait out the timeout in an unattended run.
            # ssh asks on /dev/tty (a new host's key, a key's passphrase): a new session has
            # none, while the user's own ssh setup (agent, config, known hosts) still holds
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except subprocess.TimeoutExpired:
        raise ToolError(f"cloning {source} took over {GIT_TIMEOUT_S} s") from None
    if done.returncode:
        raise ToolError(f"cannot clone {source}: {_clone_reason(done.stderr)}")
    (folder / ".git" / "debug-agent-cloned").write_text(where + "\n")
    return folder


def _clone_reason(stderr: str) -> str:
    """git's reason in a line: ssh's own ("Host key verification failed.") comes before git's
    "fatal:", and git's advice after it ("Please make sure ... and the repository exists.")."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    fatal = next((i for i, line in enumerate(lines) if line.startswith("fatal:")), None)
    if fatal is None:
        return lines[-1] if lines else "no reason given"
    return "; ".join(lines[max(0, fatal - 1) : fatal + 1])


def release_commit(folder: Path, package: str, version: str) -> tuple[str, str] | None:
    """The tag naming `version` of `package` in the clone, and its commit; None if none does."""
    wanted = Version(version)
    names = {"", "v", "release", "releasev", "version"}
    names |= {f"{n}{v}" for n in {canonicalize_name(package), package.lower()} for v in ("", "v")}
    prefixes = {re.sub(r"[-_.]", "", n) for n in names}
    repo = open_repo(folder)
    found = []
    for tag in repo.git.tag("--list").splitlines():
        match = _TRAILING_VERSION.search(tag)
        if not match or re.sub(r"[-_/ .=@]", "", tag[: match.start()].lower()) not in prefixes:
            continue
        try:
            if Version(match.group(1)) == wanted:
                found.append(tag)
        except InvalidVersion:
            continue
    if not found:
        return None
    tag = min(found, key=lambda t: (t != version, len(t)))  # the exact spelling first
    return tag, repo.git.rev_parse(f"{tag}^{{commit}}")


def source_root(folder: Path, sha: str, installed: Iterable[str]) -> str | None:
    """The folder of the tree at `sha` under which every installed file (its path in
    site-packages) lies at the same path: "" for the top, "src", "lib", ...; None if none."""
    files = list(installed)
    if not files:
        return None
    tree = set(open_repo(folder).git.ls_tree("-r", "--name-only", sha).splitlines())
    first = files[0]  # every root must hold it: the candidates, then each checked whole
    roots = {n[: len(n) - len(first)] for n in tree if n == first or n.endswith("/" + first)}
    whole = [root for root in roots if all(root + path in tree for path in files)]
    return min(whole, key=len).rstrip("/") if whole else None


def history_changes(
    folder: Path, low: str, high: str, root: str, tops: Iterable[str]
) -> CandidateSet:
    """The hunks from commit `low` to `high` of the installed package's files: those under
    `root` in the folders and modules the release installs (`tops`); the rest (tests, docs,
    the changelog) never reaches a launch."""
    found = commit_changes(open_repo(folder), low, high, own=[])
    prefix = f"{root}/" if root else ""
    kept = [
        c
        for c in found.candidates
        if c.file and c.file.startswith(prefix) and c.file[len(prefix) :].split("/")[0] in set(tops)
    ]
    return found.model_copy(update={"candidates": kept})


def top_names(installed: Iterable[str]) -> set[str]:
    """The top-level folders and modules of the installed files (`markdown2.py`, `slowlib`)."""
    return {path.split("/")[0] for path in installed}
