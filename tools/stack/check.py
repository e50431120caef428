"""What `check` (and `investigate`, before any launch) can tell wrong about a [stack] without
building anything: the two sets read, and every pinned version found where the environments
will be built from (the wheel folder, else the index)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from tools.config import TargetConfig
from tools.errors import ToolError
from tools.stack.candidates import sources, stack_sets
from tools.stack.releases import (
    ReleasesError,
    index_url,
    releases_in_folder,
    releases_on_index,
)

SHOWN = 3  # missing versions named in the one line; the rest counted


def stack_problems(config: TargetConfig, config_dir: Path) -> list[str]:
    if config.stack is None:
        return []
    try:
        good, bad = stack_sets(config, config_dir)
    except ToolError as e:
        return [f"stack: {e}"]
    names = {*good.versions, *good.references, *bad.versions, *bad.references}
    if problem := _repos_problem(config.stack.repos, names, config_dir):
        return [problem]
    where = sources(config.stack, config_dir)
    if where.wheels and not Path(where.wheels).is_dir():
        return [f"stack.wheels: {where.wheels} is not a folder"]
    if where.offline and not where.wheels:
        return ["stack: offline with no wheel folder: nothing to build the environments from"]
    pins = sorted({(n, v) for s in (good, bad) for n, v in s.versions.items()})
    missing = _missing(pins, where.wheels, None if where.offline else index_url(where.index_url))
    if not missing:
        return []
    named = ", ".join(missing[:SHOWN]) + (
        f" and {len(missing) - SHOWN} more" if len(missing) > SHOWN else ""
    )
    hint = (
        ""
        if where.offline
        else " ([stack] wheels: a folder searched first; index_url: another index)"
    )
    return [f"stack: not found {_where(where.wheels, where.offline)}: {named}{hint}"]


def _repos_problem(repos: dict[str, str], names: set[str], config_dir: Path) -> str | None:
    """A `repos` entry for a package neither set holds, or naming neither a path nor a URL."""
    held = {canonicalize_name(n) for n in names}
    for package, source in repos.items():
        if canonicalize_name(package) not in held:
            return f"stack.repos: {package} is in neither package set"
        if "://" not in source and "@" not in source and not (config_dir / source).exists():
            return f"stack.repos: {package}'s repository {source} is neither a path nor a URL"
    return None


def _where(wheels: str | None, offline: bool) -> str:
    if offline:
        return f"in the wheel folder {wheels} (offline)"
    return f"in the wheel folder {wheels} nor on the index" if wheels else "on the index"


def _missing(pins: list[tuple[str, str]], wheels: str | None, index: str | None) -> list[str]:
    """`name==version` for each pin found neither in the folder nor on the index (a package
    the index cannot be asked about counts as missing, with why)."""
    names = sorted({name for name, _ in pins})
    local = {n: releases_in_folder(Path(wheels), n) for n in names} if wheels else {}
    wanted = [(n, v) for n, v in pins if Version(v) not in local.get(n, set())]
    if not wanted or index is None:
        return [f"{n}=={v}" for n, v in wanted]

    def listed(name: str) -> set[Version] | str:
        try:
            return releases_on_index(index, name, timeout_s=15)
        except ReleasesError as e:
            return str(e)

    asked = sorted({n for n, _ in wanted})
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = dict(zip(asked, pool.map(listed, asked), strict=True))
    missing = []
    for name, version in wanted:
        answer = answers[name]
        if isinstance(answer, str):
            missing.append(f"{name}=={version} ({answer})")
        elif Version(version) not in answer:
            missing.append(f"{name}=={version}")
    return missing
