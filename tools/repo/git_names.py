"""File names as git writes them in a diff, and back; and what a submodule's lines in a diff say.

git wraps a name in double quotes and escapes it C-style when it holds a control character, a
quote or a backslash (and, with core.quotePath on, any byte >= 0x80, as octal): `"a/new\\nline.py"`,
`"a/\\303\\251.py"`. unidiff hands such headers over as written. A name with a space is not
quoted, but git ends its `---`/`+++` line with a tab so the name's end is unambiguous.
"""

from __future__ import annotations

import re

_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_BYTE = re.compile(r"""\\([0-3][0-7]{2}|[abtnvfr"\\])""")
_NAMES = {v: k for k, v in _ESCAPES.items()}


def shown_name(name: str) -> str:
    """A file name as a state can hold it: bytes that are not UTF-8 (kept as surrogate escapes
    by `unquote`) written as `\\xe9`; no JSON holds a lone surrogate."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def unquote(name: str) -> str:
    """The real name of a (possibly quoted) name from a diff header."""
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name
    raw = bytearray()
    body = name[1:-1]
    at = 0
    for m in _BYTE.finditer(body):
        raw += body[at : m.start()].encode("utf-8", "surrogateescape")
        code = m.group(1)
        raw.append(int(code, 8) if code[0].isdigit() else _ESCAPES[code])
        at = m.end()
    raw += body[at:].encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "surrogateescape")


def _escaped_byte(ch: str) -> bool:
    return "\udc80" <= ch <= "\udcff"


def quote(name: str) -> str:
    """`name` as git writes it in a header with core.quotePath off (non-ASCII left as is); a
    byte that is not UTF-8 (a surrogate escape) in octal, as git writes it with the path quoted,
    so that the patch is text a state can hold."""
    if not any(ord(ch) < 32 or ch in '"\\\x7f' or _escaped_byte(ch) for ch in name):
        return name
    out = []
    for ch in name:
        code = ord(ch)
        if code in _NAMES:
            out.append("\\" + _NAMES[code])
        elif code < 32 or code == 0x7F:
            out.append(f"\\{code:03o}")
        elif _escaped_byte(ch):
            out.append(f"\\{code - 0xDC00:03o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def header_name(prefix: str, path: str | None) -> str:
    """The name on a `---` / `+++` line: `/dev/null`, `a/x.py`, `"a/x\\ty.py"`, or
    `a/sp ace.py` with git's closing tab."""
    if path is None:
        return "/dev/null"
    name = quote(prefix + path)
    return name + "\t" if " " in name and not name.startswith('"') else name


def submodule_change(path: str, rows: list[str]) -> tuple[str, bool]:
    """A submodule's (or a git repository inside the tree's) `-Subproject commit X` /
    `+Subproject commit Y[-dirty]` rows: one line saying what changed and what becomes of it, and
    whether its pointer moved (else only its own files did, which no tree holds)."""
    old = next((r.split()[-1] for r in rows if r.startswith("-Subproject commit ")), None)
    new = next((r.split()[-1] for r in rows if r.startswith("+Subproject commit ")), None)
    dirty = bool(new and new.endswith("-dirty"))
    new = new.removesuffix("-dirty") if new else None
    if old == new:
        return f"{path}: the submodule's own uncommitted changes are in no state", False
    if old is None:
        what = f"a git repository at {(new or '')[:12]} the good commit lacks"
    elif new is None:
        what = "a submodule the working tree removes"
    else:
        what = f"submodule pointer {old[:12]} -> {new[:12]}"
    lost = "; its own uncommitted changes are in no state" if dirty else ""
    return (
        f"{path}: {what}, carried as-is (the pointer: worktrees do not check submodules out){lost}",
        True,
    )
