"""Hunks of one file that only compile together, from real diffs applied by real `git apply`."""

from __future__ import annotations

import py_compile
from pathlib import Path

import git
import pytest

from tests.conftest import make_repo
from tools.code_paths.dependencies import dependencies
from tools.code_paths.syntax_links import compile_error, splice
from tools.repo.candidates import Candidate, hunk_candidates
from tools.repo.worktree import scratch_worktree

LICENSE = "".join(f"# license line {i}\n" for i in range(12))
BODY = "".join(f"VALUE_{i} = {i}\n" for i in range(12))

# urllib3 1.25.4's vendored six.py: the module docstring moved below the license comments, one
# hunk removing it at the top and one adding it further down
DOCSTRING_GOOD = f'"""Utilities."""\n\n{LICENSE}\nfrom __future__ import absolute_import\n{BODY}'
DOCSTRING_BAD = f'{LICENSE}\n"""Utilities."""\n\nfrom __future__ import absolute_import\n{BODY}'
# a call whose bracket opens in one hunk and closes in another
BRACKET_GOOD = "total = sum(\n" + "".join(f"    {i},\n" for i in range(10)) + ")\n" + BODY
BRACKET_BAD = "total = sum([\n" + "".join(f"    {i},\n" for i in range(10)) + "])\n" + BODY
# two independent edits
APART_GOOD = "A = 1\n" + BODY + "B = 2\n"
APART_BAD = "A = 10\n" + BODY + "B = 20\n"
FILES = {
    "six.py": (DOCSTRING_GOOD, DOCSTRING_BAD),
    "calls.py": (BRACKET_GOOD, BRACKET_BAD),
    "apart.py": (APART_GOOD, APART_BAD),
    "broken.py": (APART_GOOD, APART_BAD.replace("B = 20", "B = (")),  # bad side never compiles
}


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Candidate]]:
    repo = make_repo(tmp_path_factory.mktemp("ties"), {p: g for p, (g, _) in FILES.items()})
    for path, (_, bad) in FILES.items():
        (repo / path).write_text(bad)
    _, candidates = hunk_candidates(git.Repo(repo), "good")
    return repo, candidates


def _hunks(changed: tuple[Path, list[Candidate]], path: str) -> list[Candidate]:
    found = [c for c in changed[1] if c.file == path]
    assert len(found) == 2, [c.header for c in found]
    return found


def _links(changed: tuple[Path, list[Candidate]]) -> dict[frozenset[str], str]:
    good = {path: g for path, (g, _) in FILES.items()}
    bad = {path: b for path, (_, b) in FILES.items()}
    return {frozenset((k.a, k.b)): k.reason for k in dependencies(changed[1], good, bad).links}


@pytest.mark.parametrize(
    ("path", "error", "first_alone_compiles"),
    [
        ("six.py", "from __future__ imports must occur at the beginning of the file", True),
        ("calls.py", "line ", False),
    ],
)
def test_hunks_that_only_compile_together_are_linked(
    changed, path: str, error: str, first_alone_compiles: bool
) -> None:
    first, second = _hunks(changed, path)
    reason = _links(changed)[frozenset((first.id, second.id))]
    assert "does not compile" in reason and error in reason
    # the tie is real: git's own apply of one hunk gives a file Python refuses
    repo = changed[0]
    good_sha = git.Repo(repo).rev_parse("good")
    expected = (([first], first_alone_compiles), ([second], False), ([first, second], True))
    for applied, compiles in expected:
        with scratch_worktree(repo, str(good_sha), [c.patch for c in applied]) as tree:
            try:
                py_compile.compile(str(tree / path), cfile=str(tree / "out.pyc"), doraise=True)
                compiled = True
            except py_compile.PyCompileError:
                compiled = False
        assert compiled is compiles, [c.header for c in applied]


def test_independent_hunks_and_files_that_never_compile_are_not_linked(changed) -> None:
    links = _links(changed)
    for path in ("apart.py", "broken.py"):
        first, second = _hunks(changed, path)
        assert frozenset((first.id, second.id)) not in links


def test_a_splice_of_every_hunk_is_the_bad_file(changed) -> None:
    for path, (good, bad) in FILES.items():
        hunks = [c for c in changed[1] if c.file == path]
        assert splice(good.splitlines(), hunks) == bad.splitlines()
        assert splice(good.splitlines(), []) == good.splitlines()
    assert compile_error(["x = ("], "f.py") is not None and compile_error(["x = 1"], "f.py") is None
