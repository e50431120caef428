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


def nul_holder(data: object, where: str = "") -> str | None:
    """The first key (dotted, as TOML writes it) whose text holds a NUL byte: TOML's "\\u0000"
    reaches no command line, path, pattern or environment, and a launch failed on it with
    "embedded null byte" after `check` had said ok."""
    if isinstance(data, str):
        return where if "\x00" in data else None
    items = (
        data.items()
        if isinstance(data, dict)
        else enumerate(data)
        if isinstance(data, list)
        else ()
    )
    for key, value in items:
        inner = f"{where}.{key}" if where else str(key)
        if "\x00" in str(key):
            return where or "the config"
        if found := nul_holder(value, inner):
            return found
    return None


def check_env(name: str, value: str) -> None:
    """A variable a process can be given: no system takes a NUL byte, an empty name or a name
    holding "=" (the value is not quoted: it may be a secret)."""
    if not name or "=" in name or "\x00" in name:
        raise ValueError(f"{name!r} cannot name an environment variable")
    if "\x00" in value:
        raise ValueError(f"the value of {name} holds a NUL byte, which no environment carries")


def env_pair(pair: str) -> tuple[str, str]:
    """NAME=VALUE, typed on a command line or in the chat, as a process can be given it."""
    name, sep, value = pair.partition("=")
    if not sep:
        raise ValueError("expected NAME=VALUE")
    check_env(name, value)
    return name, value
