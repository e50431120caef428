"""A vendored copy's upgrade deletes the module its old code imported (pip 19.3's urllib3
bump dropped its copy of rfc3986) and its caller starts using a name the upgrade defines:
reverting the upgrade needs both reverted too, so the set that reverts holds them. But a
deleted file's code never runs in the bad state, and applying the upgrade alone to the good
state reproduces the regression: both are named "carried with" the upgrade, not as culprits.
A real git history, a real bench."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.agent.test_first_bad_commit import _commit, _repo
from tests.tools.work_library import BENCH, investigate

HELPERS = textwrap.dedent("""\
    def normalize(key: str) -> str:
        return key.lower()
""")
CACHE_WITH_HELPERS = textwrap.dedent("""\
    from mylib.vendor.helpers import normalize


    def lookup(key: str) -> str:
        return normalize(key)
""")
CACHE_UPGRADED = textwrap.dedent("""\
    import time


    def lookup(key: str) -> str:
        time.sleep(0.02)  # "normalize in place"
        return key.lower()


    def warm(keys: list[str]) -> None:
        for key in keys:
            lookup(key)
""")
CORE_WARMED = textwrap.dedent("""\
    import time

    from mylib.vendor.cache import lookup, warm

    warm([])


    def work() -> None:
        time.sleep(0.001)
        lookup("K")
""")
CORE_WITH_CACHE = textwrap.dedent("""\
    import time

    from mylib.vendor.cache import lookup


    def work() -> None:
        time.sleep(0.001)
        lookup("K")
""")


def test_what_only_the_revert_needs_comes_along_not_as_a_culprit(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    vendor = {"mylib/vendor/__init__.py": "", "mylib/vendor/helpers.py": HELPERS}
    files = {"mylib/__init__.py": "", "mylib/core.py": CORE_WITH_CACHE, "bench.py": BENCH}
    _commit(repo, {**files, **vendor, "mylib/vendor/cache.py": CACHE_WITH_HELPERS}, "v1")
    repo.create_tag("good")
    _commit(repo, {"README.md": "mylib\n"}, "Add a README")
    (tmp_path / "mylib/vendor/helpers.py").unlink()
    upgrade = {"mylib/vendor/cache.py": CACHE_UPGRADED, "mylib/core.py": CORE_WARMED}
    culprit = _commit(repo, upgrade, "Bump vendored cache")
    _commit(repo, {"CHANGELOG.md": "- vendored cache 2.0\n"}, "Changelog")
    result = investigate(tmp_path, "work_ms 21 (was 1)")

    assert result["status"] == "confirmed", result["notes"]
    assert result["bisection"]["first_bad"]["sha"] == culprit
    # the upgrade, its caller (which uses `warm`, a name the upgrade defines) and the deleted
    # module revert together; applying the upgrade alone reproduces the regression
    causes = result["culprits"]
    assert {c["file"] for c in causes} == {"mylib/vendor/cache.py"}, causes
    assert any("time.sleep(0.02)" in c["diff"] for c in causes)
    carried = result["carried"]
    assert {cid.split("-")[0] for cid in carried} == {"helpers", "core"}, carried
    assert set(carried.values()) <= {c["id"] for c in causes}
    report = (Path(result["session_dir"]) / "report.md").read_text()
    assert all(f"{cid} (with {partner})" in report for cid, partner in carried.items())
