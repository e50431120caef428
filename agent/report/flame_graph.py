"""The HTML report's differential flame graphs: the traced references' profiles merged stack by
stack, one graph per kind of time (the GPU's from torch traces, the sampled CPU's).

As in Pyroscope's diff view, a frame is as wide as its time per unit of the bench in both states
together, so that what appeared and what vanished both show, and coloured by how it moved:
red where it grew in the bad state, blue where it shrank, pale where it held. The root sits at
the bottom; hovering a frame gives its times in both states.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from agent.profile.time_moved import profile_pairs
from agent.state import InvestigationState
from tools.profile.movers import per_unit, time_unit
from tools.profile.samples import Profile

WIDTH = 1000  # px
ROW = 17  # px
CHAR = 6.6  # px per character at the labels' size
MIN_WIDTH = 0.5  # px: a narrower frame is left out (with its children)


@dataclass
class _Frame:
    name: str
    bad: float = 0.0  # time per unit in the bad state, inclusive
    good: float = 0.0
    children: dict[str, _Frame] = field(default_factory=dict)


def _merge(root: _Frame, profile: Profile, per_unit_value: float, side: str) -> None:
    """Add `profile`'s stacks to the tree under `root`, as time per unit on `side`."""
    if not profile.seconds:
        return
    scale = per_unit_value / profile.seconds
    for stack, seconds in profile.stacks.items():
        way = [root]
        for name in stack.split(";"):
            way.append(way[-1].children.setdefault(name, _Frame(name)))
        for node in way:
            if side == "bad":
                node.bad += seconds * scale
            else:
                node.good += seconds * scale


def _colour(frame: _Frame) -> str:
    """Red by how much it grew, blue by how much it shrank (of its time in both states)."""
    total = frame.bad + frame.good
    moved = (frame.bad - frame.good) / total if total else 0.0
    fade = int(235 - 175 * min(abs(moved), 1.0))
    return f"rgb(235,{fade},{fade})" if moved > 0 else f"rgb({fade},{fade},245)"


def _label(name: str) -> str:
    """A frame's short name: what follows its file (`[kernel] …` stays whole)."""
    return name if name.startswith("[") else name.rpartition(":")[2]


@dataclass
class _Canvas:
    scale: float  # px per time per unit
    height: int  # px
    unit: str
    k: float  # the factor that writes a time per unit in `unit`


def _rects(frame: _Frame, x: float, depth: int, canvas: _Canvas) -> list[str]:
    width = (frame.bad + frame.good) * canvas.scale
    if width < MIN_WIDTH:
        return []
    y = canvas.height - (depth + 1) * ROW
    unit, k = canvas.unit, canvas.k
    tip = (
        f"{frame.name}\ngood {frame.good * k:.3g} → bad {frame.bad * k:.3g} {unit} "
        f"({(frame.bad - frame.good) * k:+.3g})"
    )
    label = _label(frame.name)
    room = int((width - 6) / CHAR)
    text = label if len(label) <= room else (label[: room - 1] + "…" if room > 3 else "")
    out = [
        f'<g class="frame"><title>{html.escape(tip)}</title>'
        f'<rect x="{x:.1f}" y="{y}" width="{max(width - 0.5, 0.1):.1f}" height="{ROW - 1}" '
        f'fill="{_colour(frame)}"/>'
        f'<text x="{x + 3:.1f}" y="{y}" dy="{ROW - 5}">{html.escape(text)}</text></g>'
    ]
    child_x = x
    for child in sorted(frame.children.values(), key=lambda c: c.name):
        out += _rects(child, child_x, depth + 1, canvas)
        child_x += (child.bad + child.good) * canvas.scale
    return out


def _depth(frame: _Frame, scale: float) -> int:
    """Rows the drawn frames take (a frame too narrow to draw is left out, with its children)."""
    if (frame.bad + frame.good) * scale < MIN_WIDTH:
        return 0
    return 1 + max((_depth(c, scale) for c in frame.children.values()), default=0)


def flame_graph_svg(
    bad: Profile,
    good: Profile,
    bad_value: float,
    good_value: float,
    higher_is_worse: bool,
    unit: str,
    title: str,
) -> str:
    """One differential flame graph as an inline SVG element ("" where neither has stacks)."""
    root = _Frame(title)
    _merge(root, bad, per_unit(bad_value, higher_is_worse), "bad")
    _merge(root, good, per_unit(good_value, higher_is_worse), "good")
    if not root.bad + root.good:
        return ""
    label, k = time_unit(unit, higher_is_worse)
    scale = WIDTH / (root.bad + root.good)
    height = _depth(root, scale) * ROW
    rects = _rects(root, 0.0, 0, _Canvas(scale, height, label, k))
    return (
        f'<svg class="flame" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{height}" font-family="monospace" font-size="11">{"".join(rects)}</svg>'
    )


def flame_graphs(state: InvestigationState) -> str:
    """The report's flame graphs of the traced references (GPU time first), as HTML."""
    pairs, bad_value, good_value = profile_pairs(state)
    figures = []
    for pair in pairs:
        svg = flame_graph_svg(
            pair.bad,
            pair.good,
            bad_value,
            good_value,
            state.worse == "higher",
            state.unit,
            pair.title,
        )
        if svg:
            figures.append(
                f'<figure id="flame-{pair.key}"><figcaption>{html.escape(pair.title)}: width is '
                "the time per unit in both states; red grew, blue shrank</figcaption>"
                f'<div style="overflow-x:auto">{svg}</div></figure>'
            )
    return "".join(figures)
