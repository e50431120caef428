"""Which diff lines change a regular expression, and which commits do: mistune's emphasis
regex (the culprit of CVE-2022-34749) written in a class attribute, the verbose pattern of
markdown2's XSS fix spread over lines of one string, code that only looks busy, and a file
moved whole."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import git

from tests.conftest import make_repo, sh
from tools.repo.candidates import hunk_candidates
from tools.repo.commit_groups import commit_groups
from tools.repo.pattern_lines import changed_patterns, holds_pattern

PATTERNS = [
    "        r'(?:\\\\[\\\\*]|[^*])*'",  # mistune's emphasis body
    "(?:[^\\t<>\"'=/]+:)?",  # a line of markdown2's verbose tag pattern
    "SEARCH = re.compile(r'\\s+$')",
    "NAME = r'(?P<name>.+?)-(?P<ver>.+?)'",  # wheel's filename regex
    "BLOCK = '[a-z]{2,}'",
]
CODE = [
    "total = values[0] + 1",
    "return f(*args, **kwargs)",
    "items[i] * 2",
    "if not match:",
    "x = (a + b) * c",
    "path.split('/')",
]


def test_a_line_holds_a_pattern_only_where_it_shows_regex_syntax() -> None:
    assert all(holds_pattern(line) for line in PATTERNS)
    assert not any(holds_pattern(line) for line in CODE)


def test_a_moved_pattern_counts_nothing_a_changed_one_counts_per_file() -> None:
    line = PATTERNS[0].strip()
    moved = {"old.py": (Counter(), Counter([line])), "new.py": (Counter([line]), Counter())}
    assert changed_patterns(moved) == {}
    edited = {
        "p.py": (Counter(["r'(?:\\\\\\*|[^\\*])*'"]), Counter([line])),
        "q.py": (Counter(["x = 1"]), Counter()),
    }
    assert changed_patterns(edited) == {"p.py": 2}


def test_each_commit_of_the_range_says_which_files_it_changed_a_pattern_in(
    tmp_path: Path,
) -> None:
    rules = "class Rules:\n    EMPHASIS = r'(\\*{1,2})((?:\\\\\\*|[^\\*])*)\\1'\n"
    repo = make_repo(tmp_path, {"lib/rules.py": rules, "lib/run.py": "def run():\n    pass\n"})
    (repo / "lib/run.py").write_text("def run():\n    return 1\n")
    sh(repo, "git", "commit", "-qam", "code only")
    sh(repo, "git", "mv", "lib/rules.py", "lib/grammar.py")
    sh(repo, "git", "commit", "-qm", "move the rules")
    slow = rules.replace("(?:\\\\\\*|[^\\*])*", "(?:\\\\[\\\\*]|[^*])*")
    (repo / "lib/grammar.py").write_text(slow)
    sh(repo, "git", "commit", "-qam", "Fix autolink in std link.")
    r = git.Repo(repo)
    good_sha, candidates = hunk_candidates(r, "good")

    groups = commit_groups(r, good_sha, candidates)

    assert [(c.subject, c.patterns) for c in groups.commits] == [
        ("code only", {}),
        ("move the rules", {}),
        ("Fix autolink in std link.", {"lib/grammar.py": 2}),
    ]
