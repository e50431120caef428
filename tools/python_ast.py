"""Python text from outside (the trees under study, a log's reprs), parsed: a syntax tree, or
a SyntaxError whatever the text. `ast.parse` raises RecursionError or MemoryError for a source
nested past its depth (200,000 unary minuses, a chain of 100,000 additions) and ValueError for a
NUL byte (Python 3.11), which its readers took as an internal error."""

from __future__ import annotations

import ast
import warnings
from typing import cast


def _parsed(source: str | bytes, mode: str) -> ast.AST:
    try:
        # the warnings a stranger's source raises (invalid escapes, "invalid decimal literal")
        # stay off the user's terminal
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)  # escapes, before Python 3.12
            return ast.parse(source, mode=mode)
    except (RecursionError, MemoryError, ValueError) as e:
        raise SyntaxError(f"cannot be parsed ({type(e).__name__}: nested too deeply?)") from None


def parse_module(source: str | bytes) -> ast.Module:
    return cast(ast.Module, _parsed(source, "exec"))


def parse_expression(source: str) -> ast.expr:
    return cast(ast.Expression, _parsed(source, "eval")).body
