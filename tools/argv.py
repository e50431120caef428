"""Command lines as argv lists: options removed or set the way argparse reads them."""

from __future__ import annotations

from collections.abc import Callable


def drop_options(argv: list[str], dropped: Callable[[str], bool]) -> list[str]:
    """argv without the options `dropped` names, with their values (`--opt v`, `--opt=v`)."""
    out: list[str] = []
    skip_value = False
    for arg in argv:
        if skip_value:
            skip_value = False
            if not arg.startswith("--"):
                continue
        name = arg.split("=", 1)[0]
        if arg.startswith("--") and dropped(name):
            skip_value = "=" not in arg
            continue
        out.append(arg)
    return out


def set_option(argv: list[str], flag: str, value: str | None) -> list[str]:
    """argv with every `flag` removed, then `flag value` appended (value "" = bare switch)."""
    out = drop_options(argv, lambda name: name == flag)
    if value is not None:
        out += [flag] if value == "" else [flag, value]
    return out


def option_value(argv: list[str], flag: str) -> str | None:
    """The value argparse would read for `flag` (`--flag v` or `--flag=v`; the last one wins)."""
    found = None
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith(flag + "="):
            found = arg.split("=", 1)[1]
    return found
