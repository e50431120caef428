"""A server log opened as text: UTF-8 (a byte that is not shown as "�"), or UTF-16 where the
file starts with its byte-order mark, as a Windows shell writes a redirected log (PowerShell's
`>`); read as UTF-8, such a log is NUL bytes between letters and nothing in it is found."""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import TextIO

_MARKS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def log_encoding(path: Path) -> str:
    with open(path, "rb") as stream:
        head = stream.read(4)
    return next((encoding for mark, encoding in _MARKS if head.startswith(mark)), "utf-8")


def open_log(path: Path) -> TextIO:
    """The log as text, line ends made "\\n" (a log copied from Windows ends lines "\\r\\n")."""
    return open(path, encoding=log_encoding(path), errors="replace", newline=None)


def read_log(path: Path) -> str:
    with open_log(path) as stream:
        return stream.read()
