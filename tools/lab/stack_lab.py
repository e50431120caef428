"""The stack lab: a small service whose two package sets pin real PyPI releases, the bad set an
upgrade of the whole stack (`debug-agent lab create stack DIR`).

What moved, and what each is:
- markdown2 2.5.0 -> 2.5.3, the culprit: issue #633 ("ReDoS in HTML tokenizer regex"), the
  attribute regex of "Fix XSS issue in safe mode (#601)", first released in 2.5.1 (the service's
  page: about 10 ms at 2.5.0, 70-77 ms at 2.5.1, 2.5.2 and 2.5.3, measured here). 2.5.1 and
  2.5.2 lie between the two versions; 2.5.0 -> 2.5.1 changes markdown2.py in 17 hunks, one of
  them the regex.
- packaging 24.1 -> 24.2: imported, harmless.
- pydantic 2.9.2 -> 2.10.6 with pydantic-core 2.23.4 -> 2.27.2: imported, harmless, and a pair
  that must move together (each pydantic release pins its pydantic-core exactly).
- six 1.16.0 -> 1.17.0, idna 3.7 -> 3.10: never imported.

The wheels come from the index when the lab is made (pip download), into `wheels/` (ignored by
git); the lab then investigates offline from that folder. The truth: the package, its two
versions, its first slow release.

`--seed N` makes a variant for `lab bench --stack`: each harmless group (packaging; the pydantic
pair; six; idna) moves or stays, markdown2 moves to 2.5.1, 2.5.2 or 2.5.3 (zero to two releases
between) or, one time in five, stays (a control: no regression to find).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools.lab.changes import LabError
from tools.lab.tree import commit_good
from tools.lab.truth import Truth, TruthEntry

GOOD = {
    "markdown2": "2.5.0",
    "packaging": "24.1",
    "pydantic": "2.9.2",
    "pydantic-core": "2.23.4",
    "typing-extensions": "4.12.2",
    "annotated-types": "0.7.0",
    "six": "1.16.0",
    "idna": "3.7",
}
BAD = GOOD | {
    "markdown2": "2.5.3",
    "packaging": "24.2",
    "pydantic": "2.10.6",
    "pydantic-core": "2.27.2",
    "six": "1.17.0",
    "idna": "3.10",
}
BETWEEN = {"markdown2": ["2.5.1", "2.5.2"]}  # the culprit's releases between, downloaded too
# what moves together in a variant: a release of pydantic pins its pydantic-core
GROUPS = [["packaging"], ["pydantic", "pydantic-core"], ["six"], ["idna"]]
FIRST_SLOW = "2.5.1"
RELEASE_HUNKS = 17  # 2.5.0 -> 2.5.1 changes markdown2.py in this many hunks
# a line the culprit hunk adds to `_sorta_html_tokenize_re`'s attribute pattern
CULPRIT_LINE = """(?:".*?"|'.*?'|[^<>"'=/\\s]+)  # value, quoted or unquoted"""

BENCH = """\
\"\"\"The service's one page: a user's HTML-heavy document rendered by markdown2, its fields
checked by a pydantic model and its format version by packaging.\"\"\"

import time

import markdown2
import packaging.version
import pydantic


class Page(pydantic.BaseModel):
    text: str
    version: str


page = Page(text='<p m="1"' * 150 + " " * 300 + "</div", version="2.0")
assert packaging.version.Version(page.version) > packaging.version.Version("1.0")
markdown2.markdown("*warm-up*")
for _ in range(3):
    started = time.perf_counter()
    markdown2.markdown(page.text)
    print(f"latency_ms: {(time.perf_counter() - started) * 1000:.3f}")
"""

CONFIG = """\
# debug-agent target config: the stack lab (a service's package upgrade: latency_ms 10 -> 75)
# Written by 'debug-agent lab create stack'; a real target uses the same keys.

[target]
repo = "."
good = "HEAD"

[bench]
kind = "command"
command = "{{python}} bench.py"
metric = "latency_ms"
unit = "ms"
metric_regex = "latency_ms: ([0-9.]+)"
per_launch = "best"

[stack]
good = "{good}"
bad = "{bad}"
python = "{python}"
wheels = "{wheels}"
offline = true
{more}"""


def stack_config(good: str, bad: str, wheels: str, more: str = "") -> str:
    """A bench-only service's config over two package sets, offline from `wheels` (the lab's,
    and a test's with sets of its own)."""
    return CONFIG.format(good=good, bad=bad, python=sys.executable, wheels=wheels, more=more)


def variant(seed: int | None) -> dict[str, str]:
    """The bad set: the lab's (no seed), or a seeded variant of it."""
    if seed is None:
        return BAD
    rng = random.Random(seed)
    bad = dict(GOOD)
    for group in GROUPS:
        if rng.random() < 0.5:
            bad |= {p: BAD[p] for p in group}
    if rng.random() >= 0.2:
        bad["markdown2"] = rng.choice([*BETWEEN["markdown2"], BAD["markdown2"]])
    return bad


def build_stack_lab(
    dest: Path, seed: int | None = None, wheels: Path | None = None
) -> tuple[Truth, Path, int]:
    """The lab (or its variant for `seed`), its wheels downloaded, or copied from `wheels`."""
    bad = variant(seed)
    (dest / "bench.py").write_text(BENCH)
    for name, pins in (("good", GOOD), ("bad", bad)):
        lines = [f"{package}=={version}" for package, version in sorted(pins.items())]
        (dest / f"requirements-{name}.txt").write_text("\n".join(lines) + "\n")
    commit_good(dest, "the service and its two package sets")
    # the wheels are no change of the service's: excluded where git keeps local ignores
    with (dest / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write("/wheels/\n")
    if wheels is None:
        download(dest / "wheels")
    else:
        shutil.copytree(wheels, dest / "wheels")
    config = dest / "debug-agent.toml"
    symptom = '\n[symptom]\ndefault = "latency_ms 75 (was 10)"\n'
    config.write_text(
        stack_config("requirements-good.txt", "requirements-bad.txt", "wheels", symptom)
    )
    moved = sorted(p for p in bad if bad[p] != GOOD[p])
    slow = bad["markdown2"] != GOOD["markdown2"]
    culprit = TruthEntry(
        kind="package",
        package=f"markdown2 {GOOD['markdown2']} -> {bad['markdown2']}",
        release=FIRST_SLOW,
        file="markdown2.py",
        marker=CULPRIT_LINE,
        why="issue #633: the HTML tokenizer's attribute regex backtracks; written by "
        f"'Fix XSS issue in safe mode (#601)', first released in {FIRST_SLOW}",
    )
    truth = Truth(
        scenario="stack" if seed is None else f"stack:{len(moved)}-moved",
        seed=seed,
        culprits=[culprit] if slow else [],
        decoys=[
            TruthEntry(kind="package", package=f"{p} {GOOD[p]} -> {bad[p]}", why=WHY[p])
            for p in moved
            if p != "markdown2"
        ],
        regression=slow,
        expected={"good_ms": 10.0, "bad_ms": 75.0 if slow else 10.0},
        symptom="latency_ms 75 (was 10)",
    )
    return truth, config, len(moved)


WHY = {
    "packaging": "imported, harmless",
    "pydantic": "imported, harmless; pins pydantic-core exactly",
    "pydantic-core": "imported, harmless; moves with pydantic",
    "six": "never imported",
    "idna": "never imported",
}


def download(folder: Path) -> None:
    """Every wheel of both sets and the culprit's releases between, from the index: one pip
    call a set (pip's resolver refuses two versions of a package in one), all at once."""
    moved = {p: v for p, v in BAD.items() if GOOD[p] != v}  # no file written by two calls
    sets = [GOOD, moved, *({p: v} for p, versions in BETWEEN.items() for v in versions)]
    with ThreadPoolExecutor(max_workers=len(sets)) as pool:
        errors = list(pool.map(lambda pins: _download(folder, pins), sets))
    failures = [error for error in errors if error]
    if failures:
        raise LabError(
            "'lab create stack' downloads its wheels from the package index (pip download): "
            + textwrap.shorten(failures[0], 200)
        )


def _download(folder: Path, pins: dict[str, str]) -> str | None:
    """None, or pip's last line of error."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
        + ["-d", str(folder), *(f"{p}=={v}" for p, v in sorted(pins.items()))],
        capture_output=True,
        text=True,
        timeout=600,
    )
    return (done.stderr.strip().splitlines() or ["no output"])[-1] if done.returncode else None
