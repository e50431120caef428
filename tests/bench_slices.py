"""The per-hunk syntax tests on real release ranges, sliced (tools/code_paths/statement_slices.py)
against whole modules: the compile ties between hunks and the comment-only verdicts must be the
same, and the bench prints both times. The line budget of the compile ties is lifted, so the
two count the same files.

    python tests/bench_slices.py [CASE ...]   (the real bundles: werkzeug, pip, markdown2, ...)

Not a test: timings belong in benchmarks, not in assertions.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import git  # noqa: E402

import agent.comment_only as comment_only_module  # noqa: E402
from agent.comment_only import comment_only  # noqa: E402
from tests.real.bundles import cases, checkout  # noqa: E402
from tools.code_paths import syntax_links  # noqa: E402
from tools.repo.candidates import hunk_candidates  # noqa: E402


def _timed(run: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    answer = run()
    return answer, time.perf_counter() - start


def _sources(repo: Path, good: str, files: set[str]) -> tuple[dict, dict]:
    before, after = {}, {}
    for path in files:
        shown = subprocess.run(["git", "show", f"{good}:{path}"], cwd=repo, capture_output=True)
        before[path] = shown.stdout.decode(errors="replace") if shown.returncode == 0 else None
        file = repo / path
        after[path] = file.read_text(errors="replace") if file.is_file() else None
    return before, after


def bench(name: str, folder: Path) -> None:
    case = next(c for c in cases() if c.name == name)
    repo = checkout(case, folder)
    _, candidates = hunk_candidates(git.Repo(repo), case.good_tag)
    good, bad = _sources(repo, case.good_tag, {c.file for c in candidates if c.file})
    syntax_links.MAX_LINES = syntax_links.MAX_LINES_PER_FILE = 10**9

    def ties() -> list:
        return sorted(syntax_links.compile_ties(candidates, good, bad))

    def comments() -> list[bool]:
        return [comment_only(c, good.get(c.file or "")) is not None for c in candidates]

    sliced_ties, ties_sliced_s = _timed(ties)
    sliced_comments, comments_sliced_s = _timed(comments)
    slicer, slice_comments = syntax_links._File._slice, comment_only_module.touched_slices
    syntax_links._File._slice = lambda self, applied: None
    comment_only_module.touched_slices = lambda lines, edits: None
    try:
        whole_ties, ties_whole_s = _timed(ties)
        whole_comments, comments_whole_s = _timed(comments)
    finally:
        syntax_links._File._slice, comment_only_module.touched_slices = slicer, slice_comments
    print(
        f"{name}: {len(candidates)} hunks; ties {len(sliced_ties)} "
        f"({'same' if sliced_ties == whole_ties else 'DIFFERENT'}), "
        f"{ties_sliced_s:.2f} s sliced vs {ties_whole_s:.2f} s whole; comment-only "
        f"{sum(sliced_comments)} ({'same' if sliced_comments == whole_comments else 'DIFFERENT'}), "
        f"{comments_sliced_s:.2f} s vs {comments_whole_s:.2f} s"
    )


def main() -> None:
    names = sys.argv[1:] or [c.name for c in cases()]
    with tempfile.TemporaryDirectory(prefix="bench-slices-") as tmp:
        for name in names:
            bench(name, Path(tmp))


if __name__ == "__main__":
    main()
