"""Candidates that must move together, read from the code before any launch.

Delta debugging builds trees from subsets of hunks; a call without the function it calls, or an
import without the module it imports, fails for no reason the regression has. So hunks are
linked: one that defines, renames, removes or re-signs a name (function, class, method,
module-level assignment, import alias) and each that uses it in its changed lines (in its file,
or in a file importing it from that module or using it as the module's attribute); the two ends
of a definition moved within a file; a file added or deleted and each hunk whose changed lines
import (Python) or name (any file) it. Definitions and imports come from each side's syntax tree,
uses at grep level, so unparsable code defines nothing. Names too common to mean anything
(builtins, keywords, dunders, `self`, one or two letters) never link. Dicts keyed by name keep it
O(names + hunks): thousands of hunks take about a second.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel

from tools.repo.candidates import Candidate

FileChange = Literal["added", "deleted", "modified"]
Event = Literal["defined", "removed", "signature", "renamed to", "renamed from"]

_MEANINGLESS = set(dir(builtins)) | set(keyword.kwlist) | set(keyword.softkwlist)
_MEANINGLESS |= {"self", "cls", "args", "kwargs"}
_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")
_ATTRIBUTE = re.compile(r"\.\s*([A-Za-z_]\w*)")
_FILE_NAME = re.compile(r"[\w.\-]+\.\w+")
_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
_CHAIN = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


class DependencyLink(BaseModel):
    a: str  # the candidate that needs b (the user, the importer)
    b: str  # the candidate that provides it (the definer, the module added or deleted)
    reason: str  # "parser-406346 calls `_split_tokens`, defined in parser-2fb423"


class Dependencies(BaseModel):
    links: list[DependencyLink] = []


def meaningless(name: str) -> bool:
    """Names that link nothing: builtins, keywords, dunders, `self`, one or two letters."""
    return len(name) <= 2 or name in _MEANINGLESS or name.startswith("__")


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


@dataclass(frozen=True)
class _Definition:
    lines: frozenset[int]  # the lines that name it: `def` line and arguments, assignment, import
    owner: str | None  # the class a method or class attribute belongs to
    signature: str | None  # a function's arguments, dumped


@dataclass(frozen=True)
class _Import:
    lines: frozenset[int]
    modules: tuple[str, ...]  # absolute dotted names the statement may load
    names: tuple[tuple[str, str, str], ...]  # (module, name, bound as) of `from m import`
    star: str | None  # the module of `from m import *`
    prefixes: tuple[tuple[str, str], ...]  # (module, the prefix its attributes are used with)


@dataclass
class _Module:
    definitions: dict[str, list[_Definition]] = field(default_factory=dict)
    imports: list[_Import] = field(default_factory=list)
    by_line: dict[int, list[tuple[str, _Definition]]] = field(default_factory=dict)


def dotted_path(path: str) -> str:
    """`python/pkg/mod.py` -> `python.pkg.mod`; a package's `__init__.py` is the package."""
    parts = PurePosixPath(path).with_suffix("").parts
    return ".".join(parts[:-1] if parts and parts[-1] == "__init__" else parts)


def _lines(first: int, last: int) -> frozenset[int]:
    return frozenset(range(first, max(first, last) + 1))


def _definitions(body: list[ast.stmt], owner: str | None, out: _Module) -> None:
    """Module-level and class-level names, through module-level if/try/with blocks."""
    for node in body:
        found: list[tuple[str, _Definition]] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            header = _lines(node.lineno, node.body[0].lineno - 1 if node.body else node.lineno)
            signature = None if isinstance(node, ast.ClassDef) else ast.dump(node.args)
            found.append((node.name, _Definition(header, owner, signature)))
            if isinstance(node, ast.ClassDef) and owner is None:
                _definitions(node.body, node.name, out)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            span = _lines(node.lineno, node.end_lineno or node.lineno)
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            found += [(name, _Definition(span, owner, None)) for name in names]
        elif isinstance(node, ast.Import | ast.ImportFrom) and owner is None:
            span = _lines(node.lineno, node.end_lineno or node.lineno)
            bound = [a.asname or a.name.split(".")[0] for a in node.names if a.name != "*"]
            found += [(name, _Definition(span, None, None)) for name in bound]
        elif isinstance(node, ast.If | ast.Try | ast.With) and owner is None:
            blocks = [getattr(node, key, []) for key in ("body", "orelse", "finalbody")]
            blocks += [h.body for h in getattr(node, "handlers", [])]
            for block in blocks:
                _definitions(block, None, out)
        for name, definition in found:
            out.definitions.setdefault(name, []).append(definition)


def _package(path: str, level: int) -> str:
    """The package a relative import of `level` dots starts from, in the repository's dots."""
    parts = dotted_path(path).split(".")[: None if path.endswith("__init__.py") else -1]
    return ".".join(parts[: len(parts) - (level - 1)] if level > 1 else parts)


def _import(node: ast.Import | ast.ImportFrom, path: str) -> _Import:
    span = _lines(node.lineno, node.end_lineno or node.lineno)
    if isinstance(node, ast.Import):
        prefixes = tuple((a.name, a.asname or a.name) for a in node.names)
        return _Import(span, tuple(a.name for a in node.names), (), None, prefixes)
    base = node.module or ""
    if node.level:
        base = ".".join(p for p in (_package(path, node.level), base) if p)
    named = [a for a in node.names if a.name != "*"]
    return _Import(
        span,
        (base, *(f"{base}.{a.name}" for a in named)),
        tuple((base, a.name, a.asname or a.name) for a in named),
        base if len(named) < len(node.names) else None,
        tuple((f"{base}.{a.name}", a.asname or a.name) for a in named),
    )


@lru_cache(maxsize=256)
def _read(source: str | None, path: str) -> _Module | None:
    """A Python file's names and imports; None for another file, or one that does not parse."""
    if source is None or not path.endswith(".py"):
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    module = _Module()
    _definitions(tree.body, None, module)
    for name, definitions in module.definitions.items():
        for d in definitions if not meaningless(name) else []:
            for line in d.lines:
                module.by_line.setdefault(line, []).append((name, d))
    module.imports = [
        _import(node, path)
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    return module


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

    def imports(self, good: _Module | None, bad: _Module | None) -> list[_Import]:
        """The import statements among the changed lines: from each side's syntax tree, or,
        where a side does not parse, from each of its changed lines that parses alone."""
        found: list[_Import] = []
        for module, numbers, lines in (
            (good, self.removed, self.c.removed_lines()),
            (bad, self.added, self.c.added_lines()),
        ):
            if module is not None:
                found += [i for i in module.imports if i.lines & numbers]
                continue
            for line in lines if self.path.endswith(".py") else []:
                alone = _read(line.strip(), self.path)
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
    def of(cls, modules: Iterable[_Module | None], index: _Index) -> _FileImports:
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


def _link(links: _Links, a: str, b: str, reason: str) -> None:
    if a != b:
        links.setdefault(frozenset((a, b)), DependencyLink(a=a, b=b, reason=reason))


def _named(module: _Module | None, lines: set[int]) -> dict[str, _Definition]:
    by_line = module.by_line if module else {}
    return {name: d for line in lines for name, d in by_line.get(line, [])}


def _signatures(module: _Module | None, name: str) -> set[str | None]:
    return {d.signature for d in (module.definitions.get(name, []) if module else [])}


def _provided(
    h: _Hunk, good: _Module | None, bad: _Module | None, moves: dict[tuple[str, str], list[_Hunk]]
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
                    _link(links, h.c.id, other.c.id, f"{h.c.id} {said}")
        for word in sorted(h.files & by_name.keys()):
            other, change = providers[by_name[word]]
            said = f"names `{word}`, a file {other.c.id} {change}"
            _link(links, h.c.id, other.c.id, f"{h.c.id} {said}")


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
                _link(links, h.c.id, p.hunk.c.id, _reason(h, p, name))
    for (path, name), (first, *others) in moves.items():
        for other in others:
            said = f"{first.c.id} and {other.c.id} move `{name}` within {path}"
            _link(links, first.c.id, other.c.id, said)


_Sources = dict[str, tuple[_Module | None, _Module | None]]


def dependencies(
    candidates: list[Candidate],
    good_sources: Mapping[str, str | None],
    bad_sources: Mapping[str, str | None],
) -> Dependencies:
    """Links between hunks that must move together. `good_sources` / `bad_sources`: each
    hunk's file as the good ref and the working tree have it (None or absent: no such file)."""
    hunks = [_Hunk(c) for c in candidates if c.kind == "hunk" and c.file]
    paths = sorted({h.path for h in hunks})
    modules = {p: (_read(good_sources.get(p), p), _read(bad_sources.get(p), p)) for p in paths}
    index = _index(p for p in paths if p.endswith(".py"))
    links: _Links = {}
    _file_links(hunks, modules, index, links)
    _use_links(hunks, modules, index, links)
    return Dependencies(links=list(links.values()))
