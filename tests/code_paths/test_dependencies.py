"""Hunks that must move together, read from a real small package in a real git repository."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from tests.conftest import make_repo, sh
from tools.code_paths.dependencies import Dependencies, dependencies, file_change
from tools.repo.candidates import Candidate, hunk_candidates

FILLER = "".join(f"# filler {i}\n" for i in range(8))  # keeps the hunks of a file apart

GOOD = {
    "pkg/__init__.py": "",
    "pkg/parser.py": f"import re\n{FILLER}def tokens(text):\n    return text.split(',')\n",
    "pkg/cli.py": f"from pkg.parser import tokens\n{FILLER}def main(t):\n    return tokens(t)\n",
    "pkg/render.py": "def render(items):\n    return ','.join(items)\n",
    "pkg/api.py": f"from pkg import render\n{FILLER}def handle(i):\n    return render.render(i)\n",
    "pkg/limits.py": f"LIMIT = 10\n{FILLER}def cap(items):\n    return items[:LIMIT]\n",
    "pkg/oldfast.py": "def run(text):\n    return text\n",
    "pkg/legacy.py": "def legacy(t):\n    from pkg import oldfast\n    return oldfast.run(t)\n",
    "pkg/engine.py": "def step(x):\n    return x\n",
    "pkg/common.py": f"class Node:\n    pass\n{FILLER}def use(node):\n    return node\n",
    "pkg/broken.py": f"def fine():\n    return 1\n{FILLER}def other():\n    return 2\n",
    "pkg/move.py": f"def helper():\n    return 1\n{FILLER}{FILLER}def main():\n    return 2\n",
    "pkg/build.py": "SOURCES = []\n",
}
BAD = {
    "pkg/parser.py": "import re\n\n\ndef _split_tokens(text):\n    return re.split(',', text)\n"
    f"{FILLER}def tokens(text):\n    return _split_tokens(text)\n",
    "pkg/cli.py": f"from pkg.parser import _split_tokens, tokens\n{FILLER}def main(t):\n"
    "    return _split_tokens(t) or tokens(t)\n",
    "pkg/render.py": "def render_items(items):\n    return ','.join(items)\n",
    "pkg/api.py": f"from pkg import render\n{FILLER}def handle(i):\n"
    "    return render.render_items(i)\n",
    "pkg/limits.py": f"{FILLER}def cap(items):\n    return items\n",
    "pkg/oldfast.py": None,
    "pkg/legacy.py": "def legacy(t):\n    return t\n",
    "pkg/fastpath.py": "def run_fast(x):\n    return x\n",
    "pkg/engine.py": "from .fastpath import run_fast\n\n\ndef step(x):\n    return run_fast(x)\n",
    "pkg/common.py": "class Node:\n    x = 1\n\n    def __init__(self):\n        self.id = 1\n"
    f"{FILLER}def use(node):\n    node.__init__()\n    return node.x, node.id, len(node)\n",
    "pkg/broken.py": f"from pkg import fastpath\ndef helper(:\n    return 1\n{FILLER}def other():\n"
    "    return helper()\n",
    "pkg/move.py": f"{FILLER}{FILLER}def main():\n    return 2\n\n\ndef helper():\n    return 1\n",
    "pkg/build.py": "SOURCES = ['kernels/fast.cu']\n",
    "pkg/kernels/fast.cu": "__global__ void fast() {}\n",
}


def _write(repo: Path, files: dict[str, str | None]) -> None:
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _read(repo: Path, candidates: list[Candidate]) -> Dependencies:
    paths = {c.file for c in candidates if c.file}
    good = {p: GOOD.get(p) for p in paths}  # what `git show good:path` gives
    bad = {p: (repo / p).read_text() if (repo / p).exists() else None for p in paths}
    return dependencies(candidates, good, bad)


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Candidate], Dependencies]:
    repo = make_repo(tmp_path_factory.mktemp("deps"), {"README": "deps\n"})
    _write(repo, dict(GOOD))
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "the package")
    sh(repo, "git", "tag", "-f", "good")
    _write(repo, BAD)
    _, candidates = hunk_candidates(git.Repo(repo), "good")
    return candidates, _read(repo, candidates)


def _reasons(changed: tuple[list[Candidate], Dependencies], *files: str) -> list[str]:
    """The reasons of the links whose both ends lie in `files` (one file: within it)."""
    candidates, found = changed
    where = {c.id: c.file for c in candidates}
    wanted = {f"pkg/{f}" for f in files}
    return [
        link.reason
        for link in found.links
        if {where[link.a], where[link.b]} <= wanted and {where[link.a], where[link.b]} >= wanted
    ]


def _id(changed: tuple[list[Candidate], Dependencies], file: str, text: str) -> str:
    return next(c.id for c in changed[0] if c.file == f"pkg/{file}" and text in c.patch)


def test_a_definition_and_its_use_in_the_same_file(changed) -> None:
    use, define = (
        _id(changed, "parser.py", "return _split"),
        _id(changed, "parser.py", "def _split"),
    )
    assert _reasons(changed, "parser.py") == [f"{use} calls `_split_tokens`, defined in {define}"]


def test_a_definition_and_its_users_in_another_file(changed) -> None:
    define = _id(changed, "parser.py", "def _split")
    imports, calls = (
        _id(changed, "cli.py", "import _split"),
        _id(changed, "cli.py", "_split_tokens(t)"),
    )
    assert sorted(_reasons(changed, "cli.py", "parser.py")) == sorted(
        [
            f"{imports} uses `_split_tokens`, defined in {define}",
            f"{calls} calls `_split_tokens`, defined in {define}",
        ]
    )


def test_a_rename_used_as_an_attribute_of_the_module(changed) -> None:
    rename, use = _id(changed, "render.py", "render_items"), _id(changed, "api.py", "render_items")
    assert _reasons(changed, "render.py", "api.py") == [
        f"{use} calls `render_items`, which {rename} renamed from `render`"
    ]


def test_a_removed_constant_and_its_use(changed) -> None:
    remove, use = _id(changed, "limits.py", "LIMIT = 10"), _id(changed, "limits.py", "[:LIMIT]")
    assert _reasons(changed, "limits.py") == [f"{use} uses `LIMIT`, which {remove} removes"]


def test_a_deleted_module_and_its_importer(changed) -> None:
    deleted, importer = _id(changed, "oldfast.py", "run"), _id(changed, "legacy.py", "oldfast")
    assert _reasons(changed, "oldfast.py", "legacy.py") == [
        f"{importer} imports `pkg.oldfast`, a module {deleted} deleted"
    ]


def test_an_added_module_and_its_importers(changed) -> None:
    added = _id(changed, "fastpath.py", "run_fast")
    relative, unparsable = (
        _id(changed, "engine.py", "fastpath"),
        _id(changed, "broken.py", "fastpath"),
    )
    assert _reasons(changed, "fastpath.py", "engine.py") == [
        f"{relative} imports `pkg.fastpath`, a module {added} added"
    ]
    assert _reasons(changed, "fastpath.py", "broken.py") == [
        f"{unparsable} imports `pkg.fastpath`, a module {added} added"
    ]
    built, cuda = _id(changed, "build.py", "SOURCES"), _id(changed, "kernels/fast.cu", "fast")
    assert _reasons(changed, "build.py", "kernels/fast.cu") == [
        f"{built} names `fast.cu`, a file {cuda} added"
    ]


def test_a_definition_moved_within_its_file(changed) -> None:
    away, again = _id(changed, "move.py", "-def helper"), _id(changed, "move.py", "+def helper")
    assert _reasons(changed, "move.py") == [f"{away} and {again} move `helper` within pkg/move.py"]


def test_common_names_and_unparsable_code_link_nothing(changed) -> None:
    assert _reasons(changed, "common.py") == []
    assert _reasons(changed, "broken.py") == []  # `helper` is defined in code that does not parse
    assert file_change(next(c for c in changed[0] if c.file == "pkg/oldfast.py")) == "deleted"


def test_thousands_of_hunks_each_call_linked_to_its_new_signature(tmp_path: Path) -> None:
    count, gap = 1000, "".join(f"# {i}\n" for i in range(7))
    repo = make_repo(
        tmp_path,
        {
            "big.py": "".join(f"def func_{i}(a):\n    return a\n{gap}" for i in range(count)),
            "use.py": "from big import *\n"
            + "".join(f"def user_{i}(a):\n    return a\n{gap}" for i in range(count)),
        },
    )
    good = {p: (repo / p).read_text() for p in ("big.py", "use.py")}
    (repo / "big.py").write_text(
        "".join(f"def func_{i}(a, b=0):\n    return a\n{gap}" for i in range(count))
    )
    (repo / "use.py").write_text(
        "from big import *\n"
        + "".join(f"def user_{i}(a):\n    return func_{i}(a, 1)\n{gap}" for i in range(count))
    )
    _, candidates = hunk_candidates(git.Repo(repo), "good")
    bad = {p: (repo / p).read_text() for p in good}
    links = dependencies(candidates, good, bad).links
    assert len(candidates) == 2 * count and len(links) == count
    use = next(c for c in candidates if c.file == "use.py" and "func_7(a, 1)" in c.patch)
    define = next(c for c in candidates if c.file == "big.py" and "func_7(a, b=0)" in c.patch)
    assert [link.reason for link in links if link.a == use.id] == [
        f"{use.id} calls `func_7`, whose signature {define.id} changes"
    ]


def test_a_function_defined_inside_a_function_links_its_file_s_uses(tmp_path: Path) -> None:
    """sqlparse 0.4.0's shape: a helper defined inside a method by one hunk, called by another
    hunk of the same method (apart, they fail with NameError)."""
    body = "".join(f"        step_{i} = {i}\n" for i in range(10))
    good = f"class Strip:\n    def process(self, text):\n{body}        return text\n"
    bad = (
        "class Strip:\n    def process(self, text):\n"
        "        def _insert_token(tok):\n            return tok.strip()\n\n"
        f"{body}        return _insert_token(text)\n"
    )
    repo = make_repo(tmp_path, {"strip.py": good})
    (repo / "strip.py").write_text(bad)
    _, candidates = hunk_candidates(git.Repo(repo), "good")
    assert len(candidates) == 2
    found = dependencies(candidates, {"strip.py": good}, {"strip.py": bad})
    assert [(link.a, link.b) for link in found.links] == [(candidates[1].id, candidates[0].id)]
    assert "`_insert_token`" in found.links[0].reason
