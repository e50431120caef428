"""Every module a server process could import, at any level: the bound behind "off, by absence".

The import chains (imports.py) prove a file on; nothing proves a file off but showing that no
code the server can run names it. This module over-approximates: starting from every module on
the path and the package's entry points, it follows each import statement wherever it stands
(module level, inside functions, in docstrings too, since the text is searched, not the syntax
tree), and every way Python imports by name at run time:

- a module name written as a string (`"sglang.kernels.ops.attention.decode:fwd"`, a registry's
  target, a `qualname` resolved later), anywhere in a reachable file, and every direct submodule
  of a package that a name is built on (`"sglang.srt.models." + name`, `f"sglang.ops.{group}"`);
- `import_module(x)` / `__import__(x)` with a computed name: the caller's own package's direct
  submodules where the name is built on its own (`f"{__name__}.{group}"`), and every relative
  name written in that file (a lazy `__getattr__` export table). A name handed over from
  elsewhere was written there, as a string or a prefix, and is followed there;
- `pkgutil.iter_modules` / `walk_packages` / loading a file by path: every submodule (every
  one below, for `walk_packages`) of the caller's own package, of the packages it imports, and
  of each package named as a string in it or in a reachable file that imports it (the callers
  that hand it a package's name).

A file outside the closure is named by nothing the server can run: off. A file the selection
already decided off (an attention backend the server did not select) is not followed, so what
only it imports stays outside too. A module the server loads from another distribution's entry
points, or from a name only a config file spells, is beyond this bound.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tools.code_paths.modules import dotted_name

_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w., \t]+)", re.M)
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)", re.M)
# a dynamic import's argument, when it is not one literal name (that one is an import)
_DYNAMIC = re.compile(
    r"\b(?:import_module|__import__)\s*\(\s*(?![rbuRBU]?[\"'][\w.]+[\"']\s*[,)])([^)]{0,160})"
)
_OWN = re.compile(r"(?<![.\w])__(?:name|package|spec|path|file)__")  # its own, not `pkg.__name__`
_BUILT_ON_OWN = re.compile(r"\{__(?:name|package)__\}\.|__(?:name|package)__\s*\+")
_WALKERS = ("iter_modules", "walk_packages", "spec_from_file_location", "run_path")
_WALK = re.compile(rf"\b(?:{'|'.join(_WALKERS)})\s*\(([^)]{{0,160}})")
_WORD = re.compile(r"\w+")
_LOOKED_UP = re.compile(
    r"[\"'][\w.]+[\"']\s*(?:not\s+)?in\s+sys\.modules\b|sys\.modules(?:\.get\(|\[)\s*[\"'][\w.]+[\"']"
)


@dataclass(frozen=True)
class Mentions:
    """What one file's text can make Python import."""

    names: frozenset[str]  # dotted names, absolute
    strings: frozenset[str]  # those of them written as strings (and its own package, if it
    # lists that one's submodules)
    children_of: frozenset[str]  # packages whose every direct submodule it may import
    walks: bool  # it lists a package's submodules, or loads files by path
    deep: bool  # it lists them all the way down (walk_packages)
    # the functions holding its walks (None: one at module level); a caller that imports
    # only other names from it hands the walk nothing (vLLM's `is_list_of` from vllm.utils,
    # whose `import_from_path` loads a file by path)
    walk_functions: frozenset[str] | None = None
    lists_path: bool = True  # it reads a package's `__path__` (what it walks may be any
    # package it imports); a walk that only loads a file by path lists none of them


_QUOTES = ("'", '"')


@lru_cache(maxsize=16)
def _spelled(top: str) -> re.Pattern[str]:
    return re.compile(rf"({re.escape(top)}\.[\w.]*)(\{{|:[\w.]*[\"']|[\"'])")


def _strings(text: str, top: str) -> tuple[set[str], set[str]]:
    """Module names of the package written as strings: whole (`"sglang.x.y"`, `"sglang.x:f"`),
    and prefixes that a name is built on (`"sglang.x." + name`, `f"sglang.x.{name}"`): the
    packages whose submodules it may name."""
    whole, prefixes = set(), set()
    if "sys.modules" in text:  # a name looked up in sys.modules is not imported
        text = _LOOKED_UP.sub("", text)
    # the name first, its opening quote checked after: a pattern that starts with a literal
    # lets the regex engine skip to each occurrence (5 times faster over a package)
    spelled = _spelled(top)
    found = (
        m.groups() for m in spelled.finditer(text) if text[m.start() - 1 : m.start()] in _QUOTES
    )
    for name, built in found:
        if built == "{" or name.endswith("."):
            prefixes.add(name.rstrip("."))
        else:
            whole.add(name)
    return whole, prefixes


@lru_cache(maxsize=8192)
def mentions(text: str, dotted: str, is_package: bool) -> Mentions:
    """The imports, module-name strings and dynamic imports in one module's text."""
    package = dotted if is_package else dotted.rpartition(".")[0]

    def relative(dots: str, rest: str) -> str:
        parts = package.split(".")
        base = parts[: len(parts) - (len(dots) - 1)]
        return ".".join(base + ([rest] if rest else []))

    names: set[str] = set()
    for group in _IMPORT.findall(text):
        names.update(n.split()[0] for n in group.split(",") if n.strip())
    for dots, module, what in _FROM.findall(text):
        base = relative(dots, module) if dots else module
        names.add(base)
        names.update(f"{base}.{w}" for w in _WORD.findall(what) if w != "as")
    whole, children = _strings(text, dotted.split(".")[0])
    names |= whole
    if "import_module" in text or "__import__" in text:
        calls = _DYNAMIC.findall(text)
        if any(_OWN.search(argument) for argument in calls) or (  # a name built on its own
            calls and _BUILT_ON_OWN.search(text)
        ):
            children.add(package)
        if calls:  # a relative name it may be handed (a lazy export table)
            for dots, rest in re.findall(r"[\"'](\.+)([\w.]*)(?::[\w.]*)?[\"']", text):
                names.add(relative(dots, rest))
    walked = _WALK.findall(text) if any(w in text for w in _WALKERS) else []
    own = any(_OWN.search(argument) for argument in walked) or (  # it lists its own package,
        "__file__" in text and ("spec_from_file_location" in text or "run_path" in text)
    )  # or loads a file found beside itself
    return Mentions(
        names=frozenset(names),
        strings=frozenset(whole | ({package} if own else set())),
        children_of=frozenset(children),
        walks=bool(walked),
        deep="walk_packages" in text,
        walk_functions=_walk_functions(text) if walked else None,
        lists_path="__path__" in text,
    )


def _handed(users: Iterable[Mentions], walkers: dict[str, Mentions]) -> dict[str, set[str]]:
    """The names each walker's callers may hand it: the strings of every module importing
    the walker's module whole, or one of the functions that walk."""
    handed: dict[str, set[str]] = {name: set() for name in walkers}
    for user in users:
        for name in user.names & walkers.keys():
            fns = walkers[name].walk_functions
            taken = {n[len(name) + 1 :] for n in user.names if n.startswith(f"{name}.")}
            if fns is None or not taken or taken & fns:
                handed[name] |= user.strings
    return handed


_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)")


def _walk_functions(text: str) -> frozenset[str] | None:
    """The functions enclosing each walk call (every level of nesting); None where a walk
    sits at module level."""
    found: set[str] = set()
    lines = text.split("\n")
    for match in _WALK.finditer(text):
        row = text.count("\n", 0, match.start())
        indent = len(lines[row]) - len(lines[row].lstrip())
        enclosing = False
        for line in reversed(lines[:row]):
            d = _DEF.match(line)
            if d and len(d.group(1)) < indent:
                found.add(d.group(2))
                indent, enclosing = len(d.group(1)), True
            if indent == 0:
                break
        if not enclosing:
            return None
    return frozenset(found)


@dataclass
class Closure:
    files: set[Path]  # every file the server could import
    searched: int  # the files it searched
    listed: frozenset[Path] = frozenset()  # files of `named_only` no followed code names
    named_by: dict[Path, str] = field(default_factory=dict)  # file -> how it was first reached


def _index(
    base: Path, texts: dict[Path, str]
) -> tuple[dict[Path, str], dict[str, Path], dict[str, set[Path]], dict[str, set[Path]]]:
    """Each file's dotted name, each name's file, each package's children and descendants."""
    dotted_of = {path: dotted_name(base, path) for path in texts}
    file_of = {name: path for path, name in dotted_of.items()}
    children: dict[str, set[Path]] = {}
    descendants: dict[str, set[Path]] = {}
    for path, name in dotted_of.items():
        children.setdefault(name.rpartition(".")[0], set()).add(path)
        parts = name.split(".")
        for i in range(1, len(parts)):
            descendants.setdefault(".".join(parts[:i]), set()).add(path)
    return dotted_of, file_of, children, descendants


def _walked(
    read: dict[Path, Mentions],
    dotted_of: dict[Path, str],
    children: dict[str, set[Path]],
    descendants: dict[str, set[Path]],
) -> list[tuple[Path, bool]]:
    """What each package walk read so far may list: the names handed to it and its own
    strings, and where it lists `__path__` (`iter_modules(pkg.__path__)`) the packages it
    imports; in a fixed order, as the caller's."""
    walkers = {dotted_of[w]: m for w, m in read.items() if m.walks}
    handed = _handed(read.values(), walkers)
    found: list[tuple[Path, bool]] = []
    for name, walker in walkers.items():
        kin = descendants if walker.deep else children
        walked = sorted(handed[name] | walker.strings)
        found += [(p, False) for n in walked for p in sorted(kin.get(n, ()))]
        if walker.lists_path:
            kids = (sorted(children.get(n, ())) for n in sorted(walker.names))
            found += [(p, False) for paths in kids for p in paths]
    return found


def can_import(
    base: Path,
    texts: dict[Path, str],
    starts: Iterable[Path],
    followed: Callable[[Path], bool],
    more_names: Iterable[str] = (),
    named_only: AbstractSet[Path] = frozenset(),
) -> Closure:
    """The files reachable from `starts` by any import (see the module's docstring).
    `texts` holds every Python file under `base`; `followed(path)` is False for a file the
    selection decided off (what only it names is not reached through it); a file of
    `named_only` is followed only where followed code names it, not where a package walk or a
    computed name merely lists it (a registry importing files of models not served)."""
    dotted_of, file_of, children, descendants = _index(base, texts)

    def files(name: str) -> list[tuple[Path, bool]]:  # the module and the packages on its way
        parts = name.split(".")
        found = (file_of.get(".".join(parts[:i])) for i in range(1, len(parts) + 1))
        return [(p, True) for p in found if p is not None]

    seen: set[Path] = set()
    listed: set[Path] = set()  # files of `named_only` only listed so far: not followed yet
    read: dict[Path, Mentions] = {}
    named_by: dict[Path, str] = {}
    todo = [(p, True) for p in starts if p in texts]
    todo += [p for n in more_names for p in files(n)]
    source: dict[Path, str] = {p: "a start" for p, _ in todo}
    while todo:
        while todo:
            path, by_name = todo.pop()
            if path in seen and not (by_name and path in listed):
                continue
            seen.add(path)
            named_by.setdefault(path, source.get(path, "a package walk"))
            if path in named_only and not by_name:
                listed.add(path)
                continue
            listed.discard(path)
            if not followed(path):
                continue
            found = read[path] = mentions(texts[path], dotted_of[path], path.name == "__init__.py")
            # in a fixed order (sets of names iterate by hash): the first namer is the one said
            named = [p for n in sorted(found.names) for p in files(n)]
            listed_children = [
                (p, False) for c in sorted(found.children_of) for p in sorted(children.get(c, ()))
            ]
            for p, _ in named + listed_children:
                source.setdefault(p, dotted_of[path])
            todo += named + listed_children
        todo = _walked(read, dotted_of, children, descendants)
        todo = [(p, named) for p, named in todo if p not in seen or (named and p in listed)]
    return Closure(files=seen, searched=len(texts), listed=frozenset(listed), named_by=named_by)
