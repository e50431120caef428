"""The placeholders each command of a config may hold, and one line for one it cannot: a
misspelt `{prot}` went to the server as written, which then listened on its own default port
while the launch waited its whole timeout for this one."""

from __future__ import annotations

import difflib
import re

LAUNCH = ("{port}", "{python}")  # [launch] and [baseline] commands
BUILD = ("{python}", "{worktree}", "{config_dir}")
BENCH = ("{python}", "{worktree}", "{config_dir}", "{base_url}", "{port}")
_ANY = sorted({*LAUNCH, *BUILD, *BENCH})
# `{name}`: JSON (`{"a": 1}`) and brace lists (`{a,b}`) never match
_TOKEN = re.compile(r"\{[A-Za-z_]\w*\}")


def placeholder_problem(command: str, where: str, known: tuple[str, ...]) -> str | None:
    """What is wrong with a placeholder in `command`, or None. A `{name}` far from every
    placeholder is left alone: a server may take a format string of its own (`{time}`)."""
    for token in _TOKEN.findall(command):
        if token in known:
            continue
        if token in _ANY:
            return (
                f"{where} holds {token}, which only other commands fill (here: {', '.join(known)})"
            )
        close = difflib.get_close_matches(token.lower(), _ANY, n=1, cutoff=0.7)
        if close:
            return f"{where} holds {token}, which is no placeholder: did you mean {close[0]}?"
    return None
