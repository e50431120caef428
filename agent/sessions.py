"""Saved sessions: where they are, what each holds (from its transcript and result.json)."""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

from agent.result import ResultSummary
from agent.state import InvestigationState
from agent.transcript import read_header
from tools.errors import ToolError, first_problem
from tools.folders import state_dir
from tools.json_text import validate_json


class SessionInfo(BaseModel):
    id: str
    path: str
    date: str
    target: str
    symptom: str
    status: str
    launches: int


def find_session(name: str, root: Path) -> Path:
    """A session folder by path or by id (a unique prefix is enough) under `root`, or under
    the state folder's sessions (where runs inside the target repository write)."""
    direct = Path(name)
    if not name.strip() or ".." in direct.parts or any(ch in name for ch in "*?[]\0"):
        raise ToolError(
            f"{name!r} is not a session id (ids look like 20261203-101500-ab12cd; "
            "a session folder may be given by its path, without '..')"
        )
    if (direct / "transcript.jsonl").exists():
        return direct
    if direct.is_absolute() or len(direct.parts) > 1:  # a path, not an id: nothing to look up
        raise ToolError(f"{name} is not a session folder (it holds no transcript.jsonl)")
    matches = []
    for folder in dict.fromkeys([root, state_dir() / "sessions"]):
        matches += sorted(p for p in folder.glob(f"{name}*") if (p / "transcript.jsonl").exists())
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ToolError(f"no session {name!r} in {root} (list them with 'debug-agent sessions')")
    raise ToolError(
        f"session id {name!r} is ambiguous in {root}: {', '.join(p.name for p in matches[:5])}"
    )


def session_info(path: Path) -> SessionInfo:
    transcript = path / "transcript.jsonl"
    header = read_header(transcript)
    result = _result_summary(path / "result.json")
    launches = result.launches
    if launches is None:  # unfinished: each launch it started has its folder
        launches = sum(p.is_dir() for p in (path / "launches").glob("[0-9]*"))
    status = result.status or ("interrupted" if _has_events(transcript) else "empty")
    stamp = header.ts
    date = time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else "?"
    target, symptom = header.target, header.symptom
    return SessionInfo(
        id=path.name,
        path=str(path),
        date=date,
        target=target.repo if target and target.repo is not None else "?",
        symptom=symptom.text if symptom and symptom.text is not None else "?",
        status=status,
        launches=launches,
    )


def _has_events(transcript: Path) -> bool:
    with transcript.open("rb") as lines:
        next(lines, None)
        return any(line.strip() for line in lines)


def _result_summary(result_file: Path) -> ResultSummary:
    """Status and launches from result.json; a damaged one is listed as such, never a crash
    of the whole list."""
    if not result_file.exists():
        return ResultSummary()
    try:
        return validate_json(ResultSummary, result_file.read_bytes())
    except (ValidationError, OSError):
        return ResultSummary(status="result.json damaged")


def list_sessions(root: Path) -> list[SessionInfo]:
    found = []
    for path in sorted(root.glob("*/transcript.jsonl"), reverse=True):
        try:
            found.append(session_info(path.parent))
        except ToolError:
            continue
    return found


def final_state(session: Path, unfinished: str) -> InvestigationState:
    """The session's final state (state.json); one clear line where it is missing (`unfinished`
    says what that means here) or damaged."""
    state_file = session / "state.json"
    if not state_file.exists():
        raise ToolError(f"session {session.name} {unfinished}")
    try:
        return validate_json(InvestigationState, state_file.read_bytes())
    except ValidationError as e:
        why = first_problem(e)
    except OSError as e:
        why = e.strerror or str(e)
    raise ToolError(f"{state_file} cannot be read as a session's state: {why}")
