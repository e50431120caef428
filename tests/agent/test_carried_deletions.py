"""A vendored copy's upgrade deletes the module its old code imported (pip 19.3's urllib3
bump dropped its copy of rfc3986): reverting the new code needs the deleted file back, so the
set that reverts holds it, but a deleted file's code never runs in the bad state. It is named
"carried with" the code that imported it, not as a culprit. A real git history, a real bench."""

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
""")
CORE_WITH_CACHE = textwrap.dedent("""\
    import time

    from mylib.vendor.cache import lookup


    def work() -> None:
        time.sleep(0.001)
        lookup("K")
""")


def test_a_deleted_module_comes_along_for_its_importer_not_as_a_culprit(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    vendor = {"mylib/vendor/__init__.py": "", "mylib/vendor/helpers.py": HELPERS}
    files = {"mylib/__init__.py": "", "mylib/core.py": CORE_WITH_CACHE, "bench.py": BENCH}
    _commit(repo, {**files, **vendor, "mylib/vendor/cache.py": CACHE_WITH_HELPERS}, "v1")
    repo.create_tag("good")
    _commit(repo, {"README.md": "mylib\n"}, "Add a README")
    (tmp_path / "mylib/vendor/helpers.py").unlink()
    culprit = _commit(repo, {"mylib/vendor/cache.py": CACHE_UPGRADED}, "Bump vendored cache")
    _commit(repo, {"CHANGELOG.md": "- vendored cache 2.0\n"}, "Changelog")
    result = investigate(tmp_path, "work_ms 21 (was 1)")

    assert result["status"] == "confirmed", result["notes"]
    assert result["bisection"]["first_bad"]["sha"] == culprit
    [cause] = result["culprits"]
    assert cause["file"] == "mylib/vendor/cache.py" and "time.sleep(0.02)" in cause["diff"]
    [(deleted, partner)] = result["carried"].items()
    assert deleted.startswith("helpers-") and partner == cause["id"]
    report = (Path(result["session_dir"]) / "report.md").read_text()
    assert f"{deleted} (with {cause['id']})" in report
