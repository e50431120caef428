"""Text from outside in report.md stays text when a markdown viewer renders it: checked with
a real CommonMark parser (markdown-it-py, which rich brings)."""

from __future__ import annotations

import json
from pathlib import Path

from markdown_it import MarkdownIt

from agent.report.markdown_text import cell, code, fence, inert_html
from tests.conftest import investigate_seed
from tools.lab.create import create_lab

HOSTILE = "<img src=x onerror=alert(1)>"


def _tokens(markdown: str) -> list:
    found = []
    for token in MarkdownIt("commonmark").parse(markdown):
        found += [token, *(token.children or [])]
    return found


def test_fences_spans_and_html_stay_text() -> None:
    diff = ["-    '''Example:", "+    '''Example: ```python", f"+{HOSTILE}", "+```'''"]
    symptom = f"verify 29ms ` {HOSTILE}"
    page = "\n".join(
        [f"Symptom: {code(symptom)}", "", f"- **{HOSTILE}-1a2b3c**: file never imported", ""]
        + fence(diff, "diff", "  ")
        + ["", "after the block", "", "| config | verdict |", "|---|---|"]
        + [f"| {cell('bad - {a|b-1f2e3d}')} | reference |"]
    )
    tokens = _tokens(inert_html(page))
    assert not [t for t in tokens if t.type in ("html_inline", "html_block")]
    assert [t.content for t in tokens if t.type == "code_inline"] == [symptom]
    blocks = [t for t in tokens if t.type == "fence"]
    assert len(blocks) == 1 and blocks[0].content == "\n".join(diff) + "\n"
    texts = "".join(t.content for t in tokens if t.type == "text")
    assert f"{HOSTILE}-1a2b3c" in texts and "after the block" in texts
    tokens = MarkdownIt("commonmark").enable("table").parse(inert_html(page))
    cells = [t.children[0].content for t in tokens if t.type == "inline" and t.map and t.children]
    assert "bad - {a|b-1f2e3d}" in cells, cells


def test_a_file_named_like_html_is_text_in_the_report(tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    (lab / "python" / f"{HOSTILE}.py").write_text("X = 1\n")
    done = investigate_seed(lab, "--max-launches", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    report = (Path(json.loads(done.stdout)["session_dir"]) / "report.md").read_text()
    assert HOSTILE[1:] in report
    assert not [t for t in _tokens(report) if t.type in ("html_inline", "html_block")]
