"""Candidates that must move together, read from the code before any launch.

Delta debugging builds trees from subsets of hunks; a call without the function it calls, or an
import without the module it imports, fails for no reason the regression has. So hunks are
linked: one that defines, renames, removes or re-signs a name (function, class, method,
module-level assignment, import alias) and each that uses it in its changed lines (in its file,
or in a file importing it from that module or using it as the module's attribute); the two ends
of a definition moved within a file; a file added or deleted and each hunk whose changed lines
import (Python) or name (any file) it; a file deleted and its renamed copy added; hunks of a
file that only compile together (syntax_links.py). Definitions and imports come from each
side's syntax tree, uses at grep level, so unparsable code defines nothing. Names too common to
mean anything (builtins, keywords, dunders, `self`, one or two letters) never link. Dicts keyed
by name keep it O(names + hunks): thousands of hunks take about a second.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel

from tools.code_paths.definitions import (
    LOCAL,
    Definition,
    ModuleImport,
    ModuleNames,
    dotted_path,
    read_module,
)
from tools.code_paths.syntax_links import compile_ties
from tools.repo.candidates import Candidate

FileChange = Literal["added", "deleted", "modified"]
Event = Literal["defined", "removed", "signature", "renamed to", "renamed from"]

_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")
_ATTRIBUTE = re.compile(r"\.\s*([A-Za-z_]\w*)")
# each starts only where a word does: from inside a 20 MB word (a data literal), every start
# scanned to its end, quadratic (an investigation stood for minutes on one hunk)
_FILE_NAME = re.compile(r"(?<![\w.\-])[\w.\-]+\.\w+")
_CALL = re.compile(r"(?<!\w)([A-Za-z_]\w*)\s*\(")
_CHAIN = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


Needed = Literal["apply", "revert", "both"]


class DependencyLink(BaseModel):
    a: str  # the candidate that needs b (the user, the importer)
    b: str  # the candidate that provides it (the definer, the module added or deleted)
    reason: str  # "parser-406346 calls `_split_tokens`, defined in parser-2fb423"
    # when a needs b: "apply" (a's new lines use what b adds: applying a to good needs b),
    # "revert" (a's old lines use what b removes: reverting a on bad needs b reverted), "both"
    when: Needed = "both"


class Dependencies(BaseModel):
    links: list[DependencyLink] = []


def file_change(c: Candidate) -> FileChange:
    """Whether the hunk's file was added, deleted or modified, from its patch's file lines."""
    lines = c.patch.splitlines()
    header = set(lines[: next((i for i, r in enumerate(lines) if r.startswith("@@")), len(lines))])
    if "--- /dev/null" in header or any(r.startswith("new file mode ") for r in header):
        return "added"
    if "+++ /dev/null" in header or any(r.startswith("deleted file mode ") for r in header):
        return "deleted"
    return "modified"


def changed_line_numbers(c: Candidate) -> tuple[set[int], set[int]]:
    """(lines the hunk removes, numbered in the good file; lines it adds, in the bad file)."""
    old, new = (c.old_range() or (0, 0))[0], c.new_start() or 0
    removed, added = set(), set()
    for row in c.body_lines():
        if row.startswith("-"):
            removed.add(old)
            old += 1
        elif row.startswith("+"):
            added.add(new)
            new += 1
        elif row.startswith(" "):
            old, new = old + 1, new + 1
    return removed, added


class _Hunk:
    """One hunk's changed lines, read once: line numbers and the words in them."""

    def __init__(self, c: Candidate) -> None:
        self.c, self.path = c, c.file or ""
        self.removed, self.added = changed_line_numbers(c)
        text = "\n".join(r for r in c.changed_lines() if not r.lstrip().startswith("#"))
        self.names = set(_NAME.findall(text))  # identifiers not after a dot
        self.attributes = set(_ATTRIBUTE.findall(text))  # identifiers after a dot
        self.files = set(_FILE_NAME.findall(text))  # words shaped like file names
        self.calls = set(_CALL.findall(text))  # identifiers followed by `(`
        self.dotted = {  # `a.b.c` gives (a, b) and (a.b, c)
            (chain.rsplit(".", i)[0], chain.split(".")[-i])
            for chain in _CHAIN.findall(text)
            for i in range(1, chain.count(".") + 1)
        }

    def imports(self, good: ModuleNames | None, bad: ModuleNames | None) -> list[ModuleImport]:
        """The import statements among the changed lines: from each side's syntax tree, or,
        where a side does not parse, from each of its changed lines that parses alone."""
        found: list[ModuleImport] = []
        for module, numbers, lines in (
            (good, self.removed, self.c.removed_lines()),
            (bad, self.added, self.c.added_lines()),
        ):
            if module is not None:
                found += [i for i in module.imports if i.lines & numbers]
                continue
            for line in lines if self.path.endswith(".py") else []:
                alone = read_module(line.strip(), self.path)
                found += alone.imports if alone else []
        return found


_Index = dict[str, set[str]]  # dotted module names (each suffix of a file's) to changed files


def _index(paths: Iterable[str]) -> _Index:
    index: _Index = {}
    for path in paths:
        parts = dotted_path(path).split(".")
        for i in range(len(parts)):
            index.setdefault(".".join(parts[i:]), set()).add(path)
    return index


@dataclass
class _FileImports:
    """What one file imports, resolved to changed files: names, prefixes, whole modules."""

    names: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # name: (path, bound)
    aliases: dict[str, str] = field(default_factory=dict)  # bound: name
    prefixes: dict[str, set[str]] = field(default_factory=dict)  # path: prefixes
    paths: set[str] = field(default_factory=set)
    stars: set[str] = field(default_factory=set)  # paths of `from m import *`

    @classmethod
    def of(cls, modules: Iterable[ModuleNames | None], index: _Index) -> _FileImports:
        out = cls()
        for statement in (i for m in modules if m is not None for i in m.imports):
            for dotted in statement.modules:
                out.paths |= index.get(dotted, set())
            out.stars |= index.get(statement.star or "", set())
            for dotted, name, bound in statement.names:
                for path in index.get(dotted, set()):
                    out.names.setdefault(name, set()).add((path, bound))
                if bound != name:
                    out.aliases[bound] = name
            for dotted, prefix in statement.prefixes:
                for path in index.get(dotted, set()):
                    out.prefixes.setdefault(path, set()).add(prefix)
        return out


@dataclass(frozen=True)
class _Provided:
    hunk: _Hunk
    event: Event
    owner: str | None
    other: str | None = None  # the name on the other side of a rename


_Links = dict[frozenset[str], DependencyLink]  # one link (the first reason) per pair


def _link(links: _Links, a: str, b: str, reason: str, when: Needed = "both") -> None:
    if a == b:
        return
    pair = frozenset((a, b))
    known = links.get(pair)
    if known is None:
        links[pair] = DependencyLink(a=a, b=b, reason=reason, when=when)
    elif (known.a, known.when) != (a, when):  # needed another way too: both ways
        known.when = "both"


# what a hunk provides, and when a user of it needs that hunk (see DependencyLink.when)
_WHEN: dict[str, Needed] = {
    "defined": "apply",
    "added": "apply",
    "removed": "revert",
    "deleted": "revert",
}


def _named(module: ModuleNames | None, lines: set[int]) -> dict[str, Definition]:
    by_line = module.by_line if module else {}
    return {name: d for line in lines for name, d in by_line.get(line, [])}


def _signatures(module: ModuleNames | None, name: str) -> set[str | None]:
    return {d.signature for d in (module.definitions.get(name, []) if module else [])}


def _provided(
    h: _Hunk,
    good: ModuleNames | None,
    bad: ModuleNames | None,
    moves: dict[tuple[str, str], list[_Hunk]],
) -> list[tuple[str, _Provided]]:
    """The names this hunk defines, removes, renames or re-signs; `moves` collects the names
    it removes or adds where the file keeps them (one end of a move within the file)."""
    added, removed = _named(bad, h.added), _named(good, h.removed)
    new = [n for n in added if good is None or n not in good.definitions]
    gone = [n for n in removed if bad is None or n not in bad.definitions]
    if len(new) == 1 and len(gone) == 1:
        (was,), (now,) = gone, new
        return [
            (now, _Provided(h, "renamed from", added[now].owner, was)),
            (was, _Provided(h, "renamed to", removed[was].owner, now)),
        ]
    found = [(n, _Provided(h, "defined", added[n].owner)) for n in new]
    found += [(n, _Provided(h, "removed", removed[n].owner)) for n in gone]
    for name in set(added) & set(removed):
        if _signatures(good, name) != _signatures(bad, name):
            found.append((name, _Provided(h, "signature", added[name].owner)))
    for name in set(added).symmetric_difference(removed).difference(new, gone):
        moves.setdefault((h.path, name), []).append(h)
    return found


def _reaches(h: _Hunk, p: _Provided, name: str, imports: _FileImports) -> bool:
    """Whether `h`'s changed lines use this `name` of p's file (not another of the same name)."""
    if p.owner == LOCAL:  # a function inside a function: its own file, by bare name
        return h.path == p.hunk.path and name in h.names
    if p.owner is not None:  # a method or class attribute: after a dot, where its class is
        owner = h.path == p.hunk.path or (p.hunk.path, p.owner) in imports.names.get(p.owner, ())
        return name in h.attributes and owner
    if h.path == p.hunk.path:
        return name in h.names
    if p.hunk.path in imports.stars or any(
        path == p.hunk.path for path, _ in imports.names.get(name, ())
    ):
        return name in h.names or any(b in h.names for _, b in imports.names.get(name, ()))
    return any((prefix, name) in h.dotted for prefix in imports.prefixes.get(p.hunk.path, ()))


def _reason(h: _Hunk, p: _Provided, name: str) -> str:
    verb = "calls" if name in h.calls else "uses"
    said = {
        "defined": f"defined in {p.hunk.c.id}",
        "removed": f"which {p.hunk.c.id} removes",
        "signature": f"whose signature {p.hunk.c.id} changes",
        "renamed from": f"which {p.hunk.c.id} renamed from `{p.other}`",
        "renamed to": f"which {p.hunk.c.id} renamed to `{p.other}`",
    }[p.event]
    return f"{h.c.id} {verb} `{name}`, {said}"


RENAMED = 0.5  # git's own threshold for calling a deleted and an added file one, renamed


def _rename_links(hunks: list[_Hunk], links: _Links) -> None:
    """A file deleted and one added under the same name elsewhere, mostly the same lines (a
    package renamed, as git -M sees it): one file moved, so they move together."""
    added: dict[str, list[_Hunk]] = {}
    for h in hunks:
        if file_change(h.c) == "added":
            added.setdefault(PurePosixPath(h.path).name, []).append(h)
    for gone in (h for h in hunks if file_change(h.c) == "deleted"):
        for new in added.get(PurePosixPath(gone.path).name, []):
            old_lines, new_lines = gone.c.removed_lines(), new.c.added_lines()
            if SequenceMatcher(None, old_lines, new_lines).ratio() >= RENAMED:
                said = f"{gone.c.id} and {new.c.id} are {gone.path} renamed to {new.path}"
                _link(links, new.c.id, gone.c.id, said)


def _file_links(hunks: list[_Hunk], modules: _Sources, index: _Index, links: _Links) -> None:
    """A module (or any file) added or deleted, and each hunk that imports (or names) it."""
    providers = {h.path: (h, change) for h in hunks if (change := file_change(h.c)) != "modified"}
    by_name = {PurePosixPath(p).name: p for p in providers if not p.endswith(".py")}
    for h in hunks:
        for statement in h.imports(*modules[h.path]):
            for dotted in statement.modules:
                for path in sorted(index.get(dotted, set()) & providers.keys() - {h.path}):
                    other, change = providers[path]
                    said = f"imports `{dotted}`, a module {other.c.id} {change}"
                    _link(links, h.c.id, other.c.id, f"{h.c.id} {said}", _WHEN[change])
        for word in sorted(h.files & by_name.keys()):
            other, change = providers[by_name[word]]
            said = f"names `{word}`, a file {other.c.id} {change}"
            _link(links, h.c.id, other.c.id, f"{h.c.id} {said}", _WHEN[change])


def _use_links(hunks: list[_Hunk], modules: _Sources, index: _Index, links: _Links) -> None:
    """A name defined, removed, renamed or re-signed, and each hunk that uses it."""
    provided: dict[str, list[_Provided]] = {}
    moves: dict[tuple[str, str], list[_Hunk]] = {}
    for h in hunks:
        for name, p in _provided(h, *modules[h.path], moves):
            provided.setdefault(name, []).append(p)
    imports = {path: _FileImports.of(both, index) for path, both in modules.items()}
    for h in hunks:
        aliases, used = imports[h.path].aliases, h.names | h.attributes
        used |= {aliases[n] for n in used & aliases.keys()}
        found = [(p, name) for name in sorted(used & provided.keys()) for p in provided[name]]
        for p, name in sorted(found, key=lambda pn: pn[0].event == "renamed to"):  # new names first
            if p.hunk is not h and _reaches(h, p, name, imports[h.path]):
                when = _WHEN.get(p.event, "both")
                _link(links, h.c.id, p.hunk.c.id, _reason(h, p, name), when)
    for (path, name), (first, *others) in moves.items():
        for other in others:
            said = f"{first.c.id} and {other.c.id} move `{name}` within {path}"
            _link(links, first.c.id, other.c.id, said)


_Sources = dict[str, tuple[ModuleNames | None, ModuleNames | None]]


def dependencies(
    candidates: list[Candidate],
    good_sources: Mapping[str, str | None],
    bad_sources: Mapping[str, str | None],
) -> Dependencies:
    """Links between hunks that must move together. `good_sources` / `bad_sources`: each
    hunk's file as the good ref and the working tree have it (None or absent: no such file)."""
    hunks = [_Hunk(c) for c in candidates if c.kind == "hunk" and c.file]
    paths = sorted({h.path for h in hunks})
    modules = {
        p: (read_module(good_sources.get(p), p), read_module(bad_sources.get(p), p)) for p in paths
    }
    index = _index(p for p in paths if p.endswith(".py"))
    links: _Links = {}
    _file_links(hunks, modules, index, links)
    _rename_links(hunks, links)
    _use_links(hunks, modules, index, links)
    for a, b, reason in compile_ties(candidates, good_sources, bad_sources):
        _link(links, a, b, reason)
    return Dependencies(links=list(links.values()))
