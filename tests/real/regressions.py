"""Documented performance regressions of real PyPI projects, each as a debug-agent target: the
last fast release committed (tag `vGOOD`), the first slow one in the working tree, and the
command bench of tests/real/bench.py on the advisory's kind of input. docs/real-runs.md has the
sources (advisory, issue, fix) and the numbers."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.real.releases import (
    DownloadError,
    download_all,
    release_history,
    unpack_dependencies,
)

BENCH = Path(__file__).resolve().parent / "bench.py"


@dataclass(frozen=True)
class Regression:
    project: str  # the PyPI name
    package: str  # its import folder, the only folder of the repository
    good: str  # the last fast release
    slow: str  # the release that introduced the regression
    # the hunks a confirmed verdict names, each as (file, text of a line the hunk adds): the
    # hunk the fix release changes, and those it cannot be measured without
    culprits: tuple[tuple[str, str], ...]
    symptom: str
    exact: bool = True  # the verdict names these hunks and no other (else: at least these)
    max_minutes: float | None = None  # the investigation's budget, where the default is too long
    dependencies: tuple[tuple[str, str, str], ...] = ()  # (project, version, import name)


REGRESSIONS = {
    "validators": Regression(
        "validators",
        "validators",
        good="0.12.1",
        slow="0.12.2",
        culprits=(("validators/domain.py", "r'^(:?(([a-zA-Z]{1})|([a-zA-Z]{1}[a-zA-Z]{1})|'"),),
        symptom="latency 100ms (was 0.05ms)",
        dependencies=(("six", "1.16.0", "six"), ("decorator", "4.4.2", "decorator")),
    ),
    "sqlparse": Regression(
        "sqlparse",
        "sqlparse",
        good="0.3.1",
        slow="0.4.0",
        culprits=(  # the fix changes the regex of _get_insert_token; the other hunk calls it
            ("sqlparse/filters/others.py", "m = re.search(r'((\\r\\n|\\r|\\n)+) *$'"),
            ("sqlparse/filters/others.py", "tlist.tokens.insert(tidx, _get_insert_token(token))"),
        ),
        symptom="latency 80ms (was 0.7ms)",
    ),
    "urllib3": Regression(
        "urllib3",
        "urllib3",
        good="1.25.3",
        slow="1.25.4",
        culprits=(  # the fix replaces this loop; the verdict may need more hunks (see the test)
            ("urllib3/util/url.py", "component = component.replace(enc, enc.upper())"),
        ),
        symptom="latency 500ms (was 25ms)",
        exact=False,  # reverting the loop alone leaves names of the rfc3986 it dropped unbound
        max_minutes=4.0,  # a bound for a slow machine: it confirms in 8 launches (about a minute)
    ),
}


def config_text(case: str, dependencies: Path | None) -> str:
    """debug-agent.toml of a library: no server, the command bench is the launch."""
    extra = f" {dependencies}" if dependencies else ""
    minutes = REGRESSIONS[case].max_minutes
    budget = f"[budget]\nmax_minutes = {minutes}\n" if minutes else ""
    return (
        textwrap.dedent(f"""\
            [bench]
            kind = "command"
            command = "{{python}} {BENCH} {case} {{worktree}}{extra}"
            metric = "latency_ms"
            unit = "ms"
            metric_regex = "latency_ms: ([0-9.]+)"
            timeout_s = 60
            # a loaded machine only ever slows a run down: a launch is its fastest run
            per_launch = "best"
            """)
        + budget
    )


def build_target(
    case: str, folder: Path, cache: Path, releases: Sequence[str] | None = None
) -> Path:
    """The case's repository in `folder/case`: each of `releases` (oldest first; default: the
    good one) a commit, the last of them (default: the slow one) in the working tree, and its
    debug-agent.toml beside them."""
    regression = REGRESSIONS[case]
    releases = list(releases or (regression.good, regression.slow))
    repo = release_history(
        folder / case, regression.project, regression.package, releases[:-1], releases[-1], cache
    )
    (repo / "debug-agent.toml").write_text(config_text(case, dependencies(case, folder, cache)))
    return repo


def dependencies(case: str, folder: Path, cache: Path) -> Path | None:
    """The folder of the case's import-only dependencies, if it has any."""
    regression = REGRESSIONS[case]
    if not regression.dependencies:
        return None
    archives = download_all([(p, v) for p, v, _ in regression.dependencies], cache)
    names = [name for _, _, name in regression.dependencies]
    return unpack_dependencies(archives, names, folder / f"{case}-dependencies")


def main(argv: list[str]) -> int:
    """python -m tests.real.regressions CASE FOLDER CACHE: build one target to try by hand."""
    if len(argv) != 3 or argv[0] not in REGRESSIONS:
        print(f"usage: regressions {{{','.join(REGRESSIONS)}}} FOLDER CACHE", file=sys.stderr)
        return 2
    try:
        print(build_target(argv[0], Path(argv[1]), Path(argv[2])))
    except (DownloadError, OSError, subprocess.CalledProcessError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
