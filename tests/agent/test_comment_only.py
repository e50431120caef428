"""A hunk that changes only comments or docstrings is told from one that changes code, on
real hunks of a real git diff: the cheap test never calls a comment-only hunk code, the exact
one decides the rest."""

from __future__ import annotations

import git
import pytest

from agent.comment_only import comment_only
from tests.conftest import make_repo
from tools.repo.candidates import hunk_candidates

FILLER = "".join(f"VALUE_{i} = {i}\n" for i in range(8))
GOOD = f'''def area(r):
    """Area of a circle.

    >>> area(1)
    3.14
    """
    return 3.14 * r * r  # pi, roughly

{FILLER}
QUERY = """
select * from t  # not a comment
"""

{FILLER}
NOTE = "a # b"

{FILLER}
def volume(r):
    return area(r) * r

{FILLER}
"a bare string, a statement of its own"

{FILLER}
# section: the sizes

{FILLER}
@cache(size=8)
def sized(r):
    return r
'''
EDITS = {
    "docstring": ("    >>> area(1)\n", "    >>> area(2) + 1\n"),  # code-like text in a docstring
    "comment": ("# pi, roughly", "# pi, to two places"),
    "string": ("select * from t  # not a comment", "select * from u  # not a comment"),
    "hash in string": ('NOTE = "a # b"', 'NOTE = "a # c"'),
    "code": ("return area(r) * r", "return area(r) * r * 1.0"),
    # the exact test parses only the statements a hunk touches: a string there is no docstring
    "bare string": ("a bare string, a statement", "a bare string, still a statement"),
    "comment between statements": ("# section: the sizes", "# section: sizes, by radius"),
    "decorator": ("@cache(size=8)", "@cache(size=16)"),
}


@pytest.fixture(scope="module")
def hunks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    repo = make_repo(tmp_path_factory.mktemp("comments"), {"shapes.py": GOOD})
    bad = GOOD
    for old, new in EDITS.values():
        assert bad.count(old) == 1, old
        bad = bad.replace(old, new)
    (repo / "shapes.py").write_text(bad)
    _, candidates = hunk_candidates(git.Repo(repo), "good")
    found = {}
    for name, (_, new) in EDITS.items():
        found[name] = next(c for c in candidates if any(new.strip() in a for a in c.added_lines()))
    return found


@pytest.mark.parametrize(
    ("edit", "only"),
    [
        ("docstring", True),
        ("comment", True),
        ("string", False),
        ("hash in string", False),
        ("code", False),
        ("bare string", False),
        ("comment between statements", True),
        ("decorator", False),
    ],
)
def test_comments_and_docstrings_from_code(hunks: dict, edit: str, only: bool) -> None:
    evidence = comment_only(hunks[edit], GOOD)
    assert (evidence is not None) is only, (edit, hunks[edit].header)
    if only:
        assert "syntax tree is identical" in evidence[0]
