"""An investigation stopped by an error still ends with a result: status `error`, the
traceback in error.txt, and the report of what was known (or, if even the report fails, the
bare facts in result.json and report.md)."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from agent.report.markdown_text import inert_html
from agent.state import InvestigationState
from tools.own_files import replace_text
from tools.repo.git_failure import error_line
from tools.secrets import mask_json, mask_text
from tools.visible import visible

if TYPE_CHECKING:
    from agent.graph import Context


def end_with_error(state: InvestigationState, ctx: Context, error: BaseException) -> dict:
    """The result object of an investigation `error` stopped (state: its last checkpoint)."""
    from agent.report.finish import finish

    folder = Path(state.session_dir)
    trace = folder / "error.txt"
    replace_text(trace, mask_text("".join(traceback.format_exception(error))))
    what = error_line(error)
    state.status, state.phase = "error", "done"
    state.notes.append(f"stopped by an error: {what} (traceback in {trace})")
    ctx.log("report", "error", state.notes[-1], traceback=str(trace))
    try:
        finish(state, ctx)
    except Exception as second:  # noqa: BLE001 - the report itself failed: the bare facts
        return _bare_result(state, second)
    ctx.log("report", "thought", f"status error; report in {folder}/report.md")
    return state.result or {}


def _bare_result(state: InvestigationState, error: BaseException) -> dict:
    """result.json and report.md when even the report could not be built."""
    folder = Path(state.session_dir)
    notes = [*state.notes, f"the report failed too: {type(error).__name__}: {error}"]
    result = {
        "session": state.session_id,
        "session_dir": state.session_dir,
        "status": "error",
        "launches": state.launches,
        "notes": notes,
    }
    replace_text(folder / "result.json", mask_json(result))
    report = f"# Investigation {state.session_id}: error\n\n" + "".join(f"- {n}\n" for n in notes)
    replace_text(folder / "report.md", inert_html(visible(mask_text(report))))
    return result
