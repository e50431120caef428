"""Package sets as users have them (pip freeze, pinned requirements, uv.lock, pylock.toml, the
environment a launch runs in), and what moved between two of them."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from tools.stack.difference import package_changes
from tools.stack.package_set import PackageSetError, installed_package_set, read_package_set

FREEZE = """\
# pip freeze inside the old image
Flask==3.0.3
markdown2==2.5.0
numpy==2.1.0
Torch==2.9.0+cu128
six==1.16.0
mylib @ file:///src/mylib-1.0-py3-none-any.whl
-e git+https://github.com/org/tool@0123abc#egg=tool
pywin32==306 ; sys_platform == "win32"
"""

REQUIREMENTS = """\
--index-url https://pypi.org/simple
flask==3.0.3 \\
    --hash=sha256:00000000
markdown2[all]==2.5.3  # the upgrade
numpy==2.1
torch==2.9.1+cu128
idna==3.10
mylib @ file:///src/mylib-1.1-py3-none-any.whl
"""


def test_a_freeze_and_a_requirements_file_and_what_moved(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.txt", tmp_path / "requirements.txt"
    good.write_text(FREEZE)
    bad.write_text(REQUIREMENTS)
    before, after = read_package_set(good), read_package_set(bad)
    assert before.versions["torch"] == "2.9.0+cu128"  # the name canonical, the version as written
    assert "pywin32" not in before.versions  # a marker for another platform
    assert before.references["tool"].startswith("git+https://")
    moved = {c.name: c for c in package_changes(before, after)}
    assert "numpy" not in moved  # 2.1.0 and 2.1 are one version
    assert moved["markdown2"].move == "upgraded" and moved["markdown2"].bad == "2.5.3"
    assert moved["torch"].describe() == "torch 2.9.0+cu128 -> 2.9.1+cu128 (upgraded)"
    assert moved["six"].move == "removed" and moved["idna"].move == "added"
    assert moved["mylib"].move == "replaced"  # two URLs: not ordered
    assert moved["tool"].move == "removed"
    assert "flask" not in moved


def test_uv_lock_and_pylock(tmp_path: Path) -> None:
    lock = tmp_path / "uv.lock"
    lock.write_text(
        textwrap.dedent("""\
            version = 1
            [[package]]
            name = "service"
            version = "0.1.0"
            source = { editable = "." }
            [[package]]
            name = "Markdown2"
            version = "2.5.3"
            source = { registry = "https://pypi.org/simple" }
            [[package]]
            name = "tool"
            source = { git = "https://github.com/org/tool?rev=0123abc" }
            """)
    )
    pylock = tmp_path / "pylock.toml"
    pylock.write_text(
        textwrap.dedent("""\
            lock-version = "1.0"
            created-by = "uv"
            [[packages]]
            name = "markdown2"
            version = "2.5.0"
            """)
    )
    locked, pinned = read_package_set(lock), read_package_set(pylock)
    assert locked.versions == {"markdown2": "2.5.3"}  # the project itself is not a package
    assert locked.references["tool"].startswith("https://github.com/org/tool")
    assert [c.describe() for c in package_changes(pinned, locked)] == [
        "markdown2 2.5.0 -> 2.5.3 (upgraded)",
        "tool https://github.com/org/tool?rev=0123abc added",
    ]


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("requirements.txt", "flask>=3.0\n", "requirements.txt:1: 'flask>=3.0' is not pinned"),
        ("requirements.txt", "a==1.0\nflask==3.0 ; \n", "requirements.txt:2: not a requirement"),
        ("requirements.txt", "flask==3.0\nFlask==3.1\n", "Flask is pinned twice, to 3.0 and 3.1"),
        ("freeze.txt", "flask===not-a-version!\n", "not a version"),
        ("uv.lock", "[[package]\nname =", "is not valid TOML"),
        ("uv.lock", "version = 1\n", "lists no packages"),
        ("pylock.toml", '[[packages]]\nname = "a"\n', "a has no version"),
        # options alone, or nothing: an empty good set made every installed package a change
        ("requirements.txt", "--index-url https://x/simple\n# none\n", "names no package"),
        ("requirements.txt", "", "names no package"),
        ("requirements.txt", "-r requirements.txt\n", "names no package"),
    ],
)
def test_a_file_that_names_no_exact_set_is_one_line(
    tmp_path: Path, name: str, text: str, says: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(PackageSetError) as error:
        read_package_set(path)
    assert says in str(error.value) and "\n" not in str(error.value)


def test_unreadable_files_are_one_line(tmp_path: Path) -> None:
    """/dev/zero was read until memory ran out; a FIFO with no writer blocked for ever."""
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00garbage")
    os.mkfifo(tmp_path / "fifo")
    for path, says in [
        (tmp_path / "missing.txt", "No such file"),
        (tmp_path, "is a folder, not a regular file"),
        (Path("/dev/zero"), "is a device, not a regular file"),
        (tmp_path / "fifo", "is a pipe, not a regular file"),
        (tmp_path / "binary.txt", "is not UTF-8 text"),
    ]:
        with pytest.raises(PackageSetError, match=says):
            read_package_set(path)


def test_requirements_read_the_files_they_include(tmp_path: Path) -> None:
    """`-r other.txt` was skipped as an option: its pins were missing from the set."""
    (tmp_path / "deps").mkdir()
    (tmp_path / "deps" / "base.txt").write_text("-r ../top.txt\nnumpy==2.1.0\n")
    (tmp_path / "deps" / "extra.txt").write_text("torch==2.9.0\n")
    (tmp_path / "top.txt").write_text(
        "\ufeffflask==3.0.0\n-r deps/base.txt\n--requirement=deps/extra.txt\n"
    )
    assert read_package_set(tmp_path / "top.txt").versions == {
        "flask": "3.0.0",
        "numpy": "2.1.0",
        "torch": "2.9.0",
    }
    (tmp_path / "deps" / "extra.txt").write_text("flask==3.1.0\n")
    with pytest.raises(PackageSetError, match="flask is pinned twice, to 3.0.0 and 3.1.0"):
        read_package_set(tmp_path / "top.txt")
    for i in range(3000):  # a chain of includes: a RecursionError, an internal error
        (tmp_path / f"r{i}.txt").write_text(f"-r r{i + 1}.txt\n")
    (tmp_path / "r3000.txt").write_text("flask==3.0.0\n")
    with pytest.raises(PackageSetError, match="r100.txt:1: -r files nested over 100 deep"):
        read_package_set(tmp_path / "r0.txt")


def test_the_environment_a_launch_runs_in_now(tmp_path: Path) -> None:
    found = installed_package_set(sys.executable)
    assert found.versions["packaging"] and found.versions["pydantic"]
    with pytest.raises(PackageSetError, match="cannot ask"):
        installed_package_set(str(tmp_path / "no-python"))
