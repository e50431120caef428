"""Text that is not UTF-8 (a Latin-1 source, a cp1252 fixture): git calls it text, so its diff
comes as hunks, read here with surrogate escapes for the bytes UTF-8 cannot decode. No JSON
state, checkpoint or transcript can hold those, so such a file's change travels as git's own
binary patch (base85, both sides), one whole-file candidate."""

from __future__ import annotations

import os
import re
import tempfile

import git
from unidiff import PatchedFile

_ESCAPED = re.compile("[\udc80-\udcff]")  # a byte that was not UTF-8, as surrogateescape keeps it


def holds_undecodable(text: str) -> bool:
    return _ESCAPED.search(text) is not None


def undecodable_change(pfiles: list[PatchedFile]) -> bool:
    return any(holds_undecodable(str(pfile)) for pfile in pfiles)


def binary_diff(repo: git.Repo, *args: str) -> str:
    """`git diff --binary ARGS` with every file taken as binary (`-diff` from an attributes file
    of our own; the repository's own .gitattributes, read after it, may still name a driver)."""
    with tempfile.NamedTemporaryFile("w", prefix="debug-agent-attributes-") as attributes:
        attributes.write("* -diff\n")
        attributes.flush()
        # one more setting after those the repository's commands already carry (no hooks,
        # the filters run once per file state: tools/repo/git_isolation.py)
        settings = {**os.environ, **repo.git.environment()}
        count = int(settings.get("GIT_CONFIG_COUNT", "0") or 0)
        return repo.git.diff(
            "--no-renames",
            "--no-color",
            "--binary",
            *args,
            strip_newline_in_stdout=False,
            env={
                "GIT_CONFIG_COUNT": str(count + 1),
                f"GIT_CONFIG_KEY_{count}": "core.attributesFile",
                f"GIT_CONFIG_VALUE_{count}": attributes.name,
            },
        )
