"""`debug-agent report SESSION --html`: one self-contained page; the verdict first, then the
hypotheses, the dead ends, and a chart of the metric per launch against the good and bad bands."""

from __future__ import annotations

import html
import io
from pathlib import Path

from agent.report.flame_graph import flame_graphs
from agent.report.markdown_page import culprit_place, in_unit
from agent.report.time_moved import INTRO, time_moved_rows
from agent.result import InvestigationResult
from agent.sessions import final_state
from agent.state import InvestigationState
from agent.stats import pooled_noise
from tools.own_files import replace_text
from tools.visible import visible


def _chart_svg(state: InvestigationState) -> str:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.ticker import MaxNLocator

    launches = sorted(
        (launch.request, config.label, launch.value)
        for config in state.configs.values()
        for launch in config.launches
    )
    bad, good = state.configs[state.bad_key], state.configs[state.good_key]
    sigma = pooled_noise([bad.values, good.values]).sigma  # relative
    fig, ax = plt.subplots(figsize=(9, 4.2), dpi=100)
    for ref, colour, name in ((bad, "#d62728", "bad"), (good, "#2ca02c", "good")):
        if ref.values:
            spread = abs(ref.mean) * (2 * sigma if sigma != float("inf") else 0.02)
            ax.axhspan(
                ref.mean - spread,
                ref.mean + spread,
                color=colour,
                alpha=0.15,
                label=f"{name} {ref.mean:.3g} ± 2σ",
            )
    xs = list(range(1, len(launches) + 1))
    ax.plot(xs, [v for _, _, v in launches], "o", color="#1f77b4", label=state.metric)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    for x, (_, label, value) in zip(xs, launches, strict=True):
        ax.annotate(
            label if len(label) < 40 else label[:37] + "...",
            (x, value),
            fontsize=7,
            rotation=20,
            xytext=(4, 4),
            textcoords="offset points",
        )
    ax.set_xlabel("launch")
    ax.set_ylabel(f"{state.metric}{in_unit(state.unit)}")
    ax.set_title(f"{state.metric} per launch")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    plt.close(fig)
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]


def _rows(items: list[list[str]]) -> str:
    return "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in items
    )


def _culprits(r: InvestigationResult) -> str:
    items = []
    for c in r.culprits:
        share = "-" if c.share is None else f"{c.share:.0%}"
        evidence = "".join(f"<li>{html.escape(e)}</li>" for e in culprit_place(c) + c.evidence)
        diff = f"<pre>{html.escape(c.diff)}</pre>" if c.diff else ""
        items.append(
            f"<li><b>{html.escape(c.id)}</b> ({html.escape(c.kind)}, share "
            f"{share}): {html.escape(c.summary)}<ul>{evidence}</ul>{diff}</li>"
        )
    return "".join(items)


def _hypotheses(state: InvestigationState) -> str:
    spent = {
        cid: sum(len(cfg.launches) for cfg in state.configs.values() if cid in cfg.ids)
        for cid in state.hypotheses
    }
    return _rows(
        [
            [
                h.candidate,
                h.status,
                f"{h.prior:.2g}",
                str(spent[h.candidate]),
                "; ".join(h.evidence or h.reasons),
            ]
            for h in sorted(state.hypotheses.values(), key=lambda h: -h.prior)
        ]
    )


def _time_moved(state: InvestigationState, r: InvestigationResult) -> str:
    """The movers table and the differential flame graphs ("" without profiles)."""
    graphs = flame_graphs(state)
    if not r.time_moved and not graphs:
        return ""
    header, rows = time_moved_rows(r)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    table = f"<table><tr>{head}</tr>{_rows(rows)}</table>" if rows else ""
    return (
        f'<h2>Where the time moved</h2><section id="time-moved"><p>{html.escape(INTRO)}.</p>'
        f"{table}{graphs}</section>"
    )


def render(state: InvestigationState) -> str:
    r = InvestigationResult.model_validate(state.result)
    m = r.metric
    culprits, hypotheses = _culprits(r), _hypotheses(state)
    dropped = _rows([[d.candidate, d.reason, "; ".join(d.evidence)] for d in r.dropped])

    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:.3g}"

    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>debug-agent {html.escape(state.session_id)}: {html.escape(str(r.status))}</title>
<style>
body {{ font: 15px/1.45 system-ui, sans-serif; max-width: 1000px; margin: 2em auto; }}
#verdict {{ font-size: 1.5em; padding: .6em 1em; border-radius: 8px; background: #eef; }}
table {{ border-collapse: collapse; width: 100%; font-size: 13px; }}
td, th {{ border: 1px solid #ccc; padding: 4px 6px; text-align: left; vertical-align: top; }}
svg.flame .frame:hover rect {{ stroke: #000; stroke-width: .7; }}
</style></head><body>
<div id="verdict">{html.escape(str(r.status))}: {html.escape(state.symptom.text)} —
{html.escape(state.metric)} bad {fmt(m.bad)}, good {fmt(m.good)},
after the fix {fmt(m.after_fix)} {html.escape(state.unit)}
({r.launches} launches)</div>
<h2>Culprits</h2><ul id="culprits">{culprits or "<li>none named</li>"}</ul>
<h2>Metric per launch</h2><figure id="chart">{_chart_svg(state)}</figure>
{_time_moved(state, r)}
<h2>Hypotheses</h2><table><tr><th>candidate</th><th>status</th><th>prior</th>
<th>launches</th><th>evidence</th></tr>{hypotheses}</table>
<h2>Dead ends dropped without a launch</h2><table><tr><th>candidate</th><th>reason</th>
<th>evidence</th></tr>{dropped}</table>
</body></html>
"""


def write_html(session: Path) -> Path:
    state = final_state(session, "has no final state (it did not finish)")
    out = session / "report.html"
    replace_text(out, visible(render(state)))  # a file name's escapes shown, not obeyed
    return out
