"""Which hunks a profile's movers speak for, and the priors that gives.

A hunk is tied to a function that moved when its changed lines lie in that function, or when
it changes a name (a class attribute, a module constant: a compiled regex, a table) that the
function spending the time uses. Its prior grows with the largest share of the gap such a
function carries in self time (the function that spends it), or half of it in inclusive time
(a function on the way to the slow code, which the hunk may have made call it more); a hunk
whose own functions were sampled in both references and moved in neither is searched later
(its prior halved). Nothing is dropped on a profile alone.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from agent.profile.time_moved import mover_line
from tools.code_paths.dependencies import changed_line_numbers
from tools.profile.code_names import FunctionSpan, functions, named
from tools.profile.movers import Mover
from tools.python_ast import parse_module
from tools.repo.candidates import Candidate

GROWTH = 4.0  # a hunk tied to a function carrying the whole gap weighs this much more, plus one
CLEARED = 0.5


@dataclass(frozen=True)
class Tie:
    """A candidate's prior factor from the profile, the words quoted for it, and the share of
    the gap it is tied to (0: searched later, not tied)."""

    factor: float
    reason: str
    weight: float = 0.0

    @classmethod
    def to(cls, weight: float, reason: str) -> Tie:
        """A tie to `weight` of the gap (clamped to 0..1): a factor of 1 + GROWTH x that."""
        weight = min(max(weight, 0.0), 1.0)
        return cls(1 + GROWTH * weight, reason, weight)


def _assignments(body: list[ast.stmt]) -> Iterator[ast.Assign | ast.AnnAssign | ast.AugAssign]:
    """The assignments of a module or class body, classes' own bodies included (never a
    function's: its names are locals)."""
    for node in body:
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from _assignments(node.body)


def _targets(node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names = set()
    for target in targets:
        names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(target) if isinstance(n, ast.Attribute)}
    return names


def _read(node: ast.expr | None) -> set[str]:
    if node is None:
        return set()
    found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return found | {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _assigned(tree: ast.Module, lines: set[int]) -> dict[str, str]:
    """The names that statements outside functions touching `lines` assign, and the names
    assigned from those in turn (a pattern's string changed, the regex compiled from it,
    `SEARCH_RE = re.compile(RE)`, is what the slow function uses): each with the changed name
    it comes from."""
    statements = list(_assignments(tree.body))
    names: dict[str, str] = {}
    for node in statements:
        if set(range(node.lineno, (node.end_lineno or node.lineno) + 1)) & lines:
            names |= {name: name for name in _targets(node)}
    while True:  # each pass adds names, or the loop ends
        derived = {
            name: names[min(read)]
            for node in statements
            if (read := _read(node.value) & names.keys())
            for name in _targets(node) - names.keys()
        }
        if not derived:
            return names
        names |= derived


def _uses(names: dict[str, str], used: set[str]) -> str:
    """`RE, which SEARCH_RE is made from` for the changed names a function uses."""
    return ", ".join(
        name if root == name else f"{root}, which {name} is made from"
        for name, root in sorted(names.items())
        if name in used
    )


def _lines(c: Candidate) -> set[int]:
    """The lines a hunk adds in the bad file (where it only removes: where it did)."""
    _, added = changed_line_numbers(c)
    return added or {c.new_start() or 0}


def _innermost(functions: list[FunctionSpan], lines: set[int]) -> list[FunctionSpan]:
    """The functions holding one of `lines` that hold no other such function."""
    inside = [f for f in functions if any(f.first <= n <= f.last for n in lines)]
    return [
        f
        for f in inside
        if not any(g is not f and f.first <= g.first and g.last <= f.last for g in inside)
    ]


def _tie(
    c: Candidate,
    spans: list[FunctionSpan],
    tree: ast.Module,
    moved: list[Mover],
    unit: str,
    higher_is_worse: bool,
) -> tuple[float, str] | None:
    """The largest share of a mover the hunk is tied to, and the words for it."""
    lines = _lines(c)
    innermost = {f.qualname for f in _innermost(spans, lines)}
    names = _assigned(tree, lines) if not innermost else {}
    best: tuple[float, str] | None = None
    for m in moved:
        path, _, qualname = m.function.partition(":")
        if path != c.file or m.delta <= 0 or not m.share:
            continue
        function = named(spans, qualname)
        how = ""
        if function is not None and function.qualname in innermost:
            how = "its lines lie in it"
        elif m.kind == "self" and function is not None and names.keys() & function.uses:
            how = f"it changes {_uses(names, function.uses)}, which it uses"
        # inclusive time grows on the whole way to the slow code: half the weight
        weight = m.share * (1.0 if m.kind == "self" else 0.5)
        if how and (best is None or weight > best[0]):
            best = (weight, f"profile: {mover_line(m, unit, higher_is_worse)}; {how}")
    return best


def profile_priors(
    candidates: list[Candidate],
    bad_sources: dict[str, str | None],
    moved: list[Mover],
    sampled: set[str],
    unit: str,
    higher_is_worse: bool = True,
) -> dict[str, Tie]:
    """Each hunk's prior factor from the profile, with the reason quoted in the transcript.
    `sampled`: the functions ("path:qualname") either reference's profile saw."""
    parsed: dict[str, tuple[ast.Module, list[FunctionSpan]] | None] = {}
    out: dict[str, Tie] = {}
    for c in candidates:
        if c.kind != "hunk" or not c.file:
            continue
        if c.file not in parsed:
            try:
                tree = parse_module(bad_sources.get(c.file) or "")
                parsed[c.file] = (tree, functions(tree))
            except (SyntaxError, ValueError, RecursionError):
                parsed[c.file] = None
        found = parsed[c.file]
        if found is None or not found[1]:
            continue
        tree, spans = found
        tied = _tie(c, spans, tree, moved, unit, higher_is_worse)
        if tied is not None:
            out[c.id] = Tie.to(*tied)
            continue
        _, added = changed_line_numbers(c)
        own = {f"{c.file}:{f.qualname}" for f in _innermost(spans, added or {c.new_start() or 0})}
        if own and own <= sampled and not own & {m.function for m in moved}:
            listed = ", ".join(sorted(q.partition(":")[2] for q in own))
            out[c.id] = Tie(CLEARED, f"profile: {listed} took the same time in both references")
    return out
