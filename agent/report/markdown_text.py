"""Text from outside (file names, a symptom, hunks, commit subjects, a model's words) in
report.md, inert: rendered, it shows as written. A fence is longer than any run of backticks in
what it holds (a docstring's ``` closed the diff block early, and the rest of the hunk was
markdown); an inline code span is as long as its text needs; `<` outside code is written `&lt;`
(a file named `<img src=x onerror=…>.py` was live HTML in a markdown viewer)."""

from __future__ import annotations

import re

_RUN = re.compile(r"`+")
_FENCE = re.compile(r"\s*(`{3,})")
_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")


def _longest_run(text: str) -> int:
    return max((len(run) for run in _RUN.findall(text)), default=0)


def fence(body: list[str], info: str = "", indent: str = "") -> list[str]:
    """`body` as a fenced block, indented by `indent` (a list item's)."""
    ticks = "`" * max(3, max((_longest_run(row) for row in body), default=0) + 1)
    return [f"{indent}{ticks}{info}", *[f"{indent}{row}" for row in body], f"{indent}{ticks}"]


def code(text: str) -> str:
    """`text` as an inline code span."""
    ticks = "`" * (_longest_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def cell(text: str) -> str:
    """`text` in a table cell: its `|` would end the cell."""
    return text.replace("|", "\\|")


def inert_html(markdown: str) -> str:
    """`markdown` with `<` written `&lt;` wherever a viewer would read it as HTML: outside
    fenced blocks and code spans."""
    out: list[str] = []
    closing = 0  # the open fence's length; 0: none open
    for line in markdown.split("\n"):
        opened = _FENCE.match(line)
        if closing:
            stripped = line.strip()
            if stripped and set(stripped) == {"`"} and len(stripped) >= closing:
                closing = 0
            out.append(line)
        elif opened:
            closing = len(opened[1])
            out.append(line)
        else:
            out.append(_outside_spans(line))
    return "\n".join(out)


def _outside_spans(line: str) -> str:
    parts, at = [], 0
    for span in _SPAN.finditer(line):
        parts += [line[at : span.start()].replace("<", "&lt;"), span.group(0)]
        at = span.end()
    return "".join([*parts, line[at:].replace("<", "&lt;")])
