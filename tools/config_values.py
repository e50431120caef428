"""Checks of a config's text values, for the sections' validators: command lines that split
into words, with only the placeholders they may hold, and regular expressions that compile."""

from __future__ import annotations

import re
import shlex

from tools.placeholders import placeholder_problem


def command_words(
    command: str | None, where: str, placeholders: tuple[str, ...] = ()
) -> str | None:
    """A command line that splits into words the way the shell would, with no placeholder it
    cannot hold (`placeholders`: those it may; none given: checked by the caller); else a clear
    error."""
    if command is None:
        return None
    if placeholders and (problem := placeholder_problem(command, where, placeholders)):
        raise ValueError(problem)
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise ValueError(f"{where} cannot be split into words ({e}): {command!r}") from None
    if not words:
        raise ValueError(f"{where} is empty")
    return command


def valid_regex(pattern: str | None, where: str) -> str | None:
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as e:
            raise ValueError(
                f"{where} is not a valid regular expression ({e}): {pattern!r}"
            ) from None
    return pattern
