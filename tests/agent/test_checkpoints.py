"""Checkpoints stay small: candidates' patch texts are stored once, by content, and each
checkpoint refers to them; what comes back is what went in."""

from __future__ import annotations

import sqlite3
import time
import uuid
from pathlib import Path

from langgraph.checkpoint.base import empty_checkpoint

from agent.checkpoints import saver
from agent.state import InvestigationState
from agent.symptom import parse_symptom
from tools.repo.candidates import Candidate


def _state(hunks: int) -> InvestigationState:
    candidates = [
        Candidate(
            id=f"h{i:04d}",
            kind="hunk",
            file=f"pkg/m{i % 60}.py",
            patch=f"--- a/pkg/m{i % 60}.py\n+++ b/pkg/m{i % 60}.py\n@@ -{i},30 +{i},30 @@\n"
            + "".join(f"+    value_{i}_{j} = compute(x, {j})\n" for j in range(30)),
        )
        for i in range(hunks)
    ]
    return InvestigationState(
        session_id="s",
        session_dir="/tmp/s",
        config_path="/tmp",
        symptom=parse_symptom("verify 29ms"),
        metric="verify_ms",
        worse="higher",
        max_launches=40,
        deadline=time.time() + 3600,
        candidates=candidates,
    )


def test_patch_texts_are_stored_once(tmp_path: Path) -> None:
    path = tmp_path / "checkpoints.sqlite"
    state = _state(624)
    patches = sum(len(c.patch) for c in state.candidates)
    connection = sqlite3.connect(path)
    checkpointer = saver(connection)
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    for step in range(10):  # a step stores the whole state, and the node's writes
        state.launches = step
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = dict(state)
        config = checkpointer.put(config, checkpoint, {"source": "loop", "step": step}, {})
        checkpointer.put_writes(config, list(dict(state).items()), str(uuid.uuid4()))
    connection.close()
    assert path.stat().st_size < 2 * patches  # not 20 copies of them
    again = saver(sqlite3.connect(path)).get_tuple({"configurable": {"thread_id": "t"}})
    assert again is not None
    assert again.checkpoint["channel_values"]["candidates"] == state.candidates
    assert again.checkpoint["channel_values"]["launches"] == 9
