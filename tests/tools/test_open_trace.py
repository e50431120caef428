"""The file-open trace: which changed data files a launch opened, seen by the kernel (inotify),
whoever opened them. A changed data file nobody opened is dropped before any launch; an added one
is only searched last (its existence alone could matter); a data file read by the code (a tuning
JSON) is kept and, here, confirmed."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from tests.conftest import make_repo
from tests.tools.work_library import BENCH, config, investigate
from tools.proc.open_trace import watch_opens


def test_opens_by_any_process_are_seen_and_a_replaced_file_proves_nothing(
    tmp_path: Path,
) -> None:
    for name in ("read.json", "unread.md", "table.bin", "replaced.cfg", "new.cfg"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / "link.json").symlink_to("read.json")
    with watch_opens(tmp_path, ["read.json", "link.json", "gone"]) as w:  # their folder
        subprocess.run(["cat", "read.json"], cwd=tmp_path, check=True, capture_output=True)
        for _ in range(20000):  # far more events than the kernel's queue holds (16384)
            (tmp_path / "table.bin").open("rb").close()
        (tmp_path / "unread.md").stat()  # a stat is no open
        (tmp_path / "new.cfg").replace(tmp_path / "replaced.cfg")  # its opens: another inode
        trace = w.trace()
    assert trace.watched == ["read.json", "table.bin", "unread.md"]
    assert trace.opened == ["read.json", "table.bin"]


CORE = textwrap.dedent("""\
    import json
    import os
    import pathlib
    import time

    PATH = os.environ.get("MYLIB_TUNING", pathlib.Path(__file__).parent / "tuning.json")
    TUNING = json.loads(pathlib.Path(PATH).read_text())


    def work():
        time.sleep(TUNING["delay_s"])
""")


def _library(tmp_path: Path) -> Path:
    """src/mylib, whose work() sleeps as long as its tuning JSON says, slowed 20 times."""
    repo = make_repo(
        tmp_path,
        {
            "src/mylib/__init__.py": "",
            "src/mylib/core.py": CORE,
            "src/mylib/tuning.json": '{"delay_s": 0.001}\n',
            "docs/notes.md": "# Notes\n",
            "bench.py": BENCH,
        },
    )
    (repo / "src/mylib/tuning.json").write_text('{"delay_s": 0.020}\n')  # the culprit
    (repo / "docs/notes.md").write_text("# Notes\n\nTuned the delay.\n")  # read by nobody
    (repo / "data").mkdir()
    (repo / "data/extra.csv").write_text("a,b\n1,2\n")  # added, read by nobody
    return repo


def test_data_files_nobody_opened_are_dropped_or_searched_last(tmp_path: Path) -> None:
    repo = _library(tmp_path)
    for number in range(1000):  # an untracked folder of many files (a venv, node_modules)
        (repo / "data" / f"part-{number}.csv").write_text(f"{number}\n")
    (repo / "debug-agent.toml").write_text(config())
    result = investigate(repo)
    assert result["status"] == "confirmed", result["notes"]
    assert [c["file"] for c in result["culprits"]] == ["src/mylib/tuning.json"]
    dropped = {d["file"]: d["reason"] for d in result["dropped"]}
    assert dropped == {"docs/notes.md": "file never opened"}, dropped
    # the tuning file first (the added CSVs weigh a fifth of one file, together: each alone,
    # their 1001 fifths were searched first): revert, apply, and the references
    assert result["launches"] == 6, result["launches"]
    transcript = Path(result["session_dir"], "transcript.jsonl").read_text()
    assert "conditions; added but never opened while the bad state ran (its existence" in transcript
    assert "one of 1001 files in data/ that can matter by their existence alone" in transcript
    assert "data/ holds 1001 untracked files, each a candidate carried into" in transcript
    report = Path(result["session_dir"], "report.md").read_text()  # 40 listed, then a count
    assert report.count("was not opened by any process") == 1 + 40  # notes.md, 40 CSVs
    assert "- … and 961 more cleared, each with its evidence in result.json" in report


def test_a_data_file_read_in_the_users_checkout_is_kept_and_named(tmp_path: Path) -> None:
    """An absolute path in the launch's env reads the checkout's copy: every configuration
    reads the same bytes, and the verdict says which file and where."""
    repo = _library(tmp_path)
    tuning = repo / "src/mylib/tuning.json"
    (repo / "debug-agent.toml").write_text(config(env=f', MYLIB_TUNING = "{tuning}"'))
    result = investigate(repo)
    assert result["status"] in ("not_reproduced", "no_regression"), result["notes"]
    assert "src/mylib/tuning.json" not in {d["file"] for d in result["dropped"]}
    read_there = "src/mylib/tuning.json was read from your checkout, not from the scratch tree"
    assert any(note.startswith(read_there) for note in result["notes"]), result["notes"]
