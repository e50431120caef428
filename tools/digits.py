"""Whole numbers as a user, a log or a file may write them: ASCII digits only.

`str.isdigit` is true for "²" and "٣" too; `int("²")` raises, and `int("٣")` reads 3 from text
no one wrote as a number here. Every check that guards an `int(...)` uses this instead.
"""

from __future__ import annotations


def is_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()
