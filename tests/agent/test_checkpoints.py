"""Checkpoints stay small: candidates, hypotheses, configurations, links and commit groups are
stored once, by content, and each checkpoint refers to them; what comes back is what went
in."""

from __future__ import annotations

import sqlite3
import time
import uuid
from pathlib import Path

from langgraph.checkpoint.base import empty_checkpoint

from agent.checkpoints import saver
from agent.state import Hypothesis, InvestigationState, Launch, Link, Variant
from agent.symptom import parse_symptom
from tools.repo.candidates import Candidate
from tools.repo.commit_groups import CommitGroups, RangeCommit


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
    ids = [c.id for c in candidates]
    reasons = ["path on the verify_ms code path (attention)", "changes numbers or conditions"]
    return InvestigationState(
        hypotheses={cid: Hypothesis(candidate=cid, prior=1.5, reasons=reasons) for cid in ids},
        links=[
            Link(a=a, b=b, reason=f"{a} calls `f_{a}`, defined in {b}")
            for a, b in zip(ids, ids[1:], strict=False)
        ],
        commits=CommitGroups(
            commits=[
                RangeCommit(sha=f"{n:040x}", subject=f"change {n} (#{n})") for n in range(500)
            ],
            of={cid: n % 500 for n, cid in enumerate(ids)},
        ),
        configs={
            f"k{n}": Variant(key=f"k{n}", label=f"bad - {{{ids[n]}}}", base="bad", ids=ids[: n + 1])
            for n in range(40)
        },
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
    whole = len(state.model_dump_json())
    connection = sqlite3.connect(path)
    checkpointer = saver(connection)
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    for step in range(10):  # a step stores the whole state, and the node's writes
        state.launches = step
        if step % 3 == 0:  # a launch: one configuration gains a value, the rest is unchanged
            state.configs["k0"].launches.append(
                Launch(value=20.0 + step, samples=[], log="", request=step)
            )
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = dict(state)
        config = checkpointer.put(config, checkpoint, {"source": "loop", "step": step}, {})
        checkpointer.put_writes(config, list(dict(state).items()), str(uuid.uuid4()))
    connection.close()
    assert path.stat().st_size < 2 * patches  # not 20 copies of them
    assert path.stat().st_size < 3 * whole  # nor of the rest, for 4 distinct configs
    again = saver(sqlite3.connect(path)).get_tuple({"configurable": {"thread_id": "t"}})
    assert again is not None
    assert again.checkpoint["channel_values"]["candidates"] == state.candidates
    assert again.checkpoint["channel_values"]["launches"] == 9
    for channel in ("hypotheses", "links", "commits", "configs"):
        assert again.checkpoint["channel_values"][channel] == getattr(state, channel)
