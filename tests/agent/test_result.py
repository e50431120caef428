"""The typed result (agent.result) and transcript events (agent.events): a real investigation's
--json and result.json validate and round-trip; old sessions still read; the lines keep their
format."""

from __future__ import annotations

import json
import shutil
import typing
from pathlib import Path

import pytest

from agent.events import (
    ExperimentPayload,
    Payload,
    ToolCallPayload,
    ToolResultPayload,
    VerdictPayload,
)
from agent.replay import steps
from agent.result import Claim, InvestigationResult, LLMResult, ResultSummary, Status
from agent.sessions import session_info
from agent.transcript import Transcript, TranscriptError, read_transcript
from tests.conftest import REPO_ROOT, run_cli

EXAMPLE = REPO_ROOT / "sessions" / "example-seed"


def _round_trip(text: str) -> str:
    """result.json as the model reads and writes it."""
    return json.dumps(InvestigationResult.model_validate_json(text).model_dump(), indent=2)


def test_a_real_investigation_validates_and_its_result_json_round_trips(seed_lab: Path) -> None:
    done = run_cli("investigate", "--symptom", "verify 29ms", "--json", cwd=seed_lab, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = InvestigationResult.model_validate_json(done.stdout)
    printed = json.loads(done.stdout)
    assert result.model_dump() == printed
    assert list(result.model_dump()) == list(printed)  # the same keys, in the same order
    assert result.status == "confirmed"
    assert result.llm is None and printed["llm"] is None
    assert [c.file for c in result.culprits] == ["python/sglang/srt/distributed/parallel_state.py"]
    assert result.metric.after_fix is not None and result.cleared and result.dropped
    session = Path(result.session_dir)
    saved = (session / "result.json").read_text()
    assert _round_trip(saved) == saved  # byte for byte
    assert json.loads(saved) == printed
    loaded = read_transcript(session / "transcript.jsonl")
    assert loaded.header.session == result.session and not loaded.torn
    experiments = [e for e in loaded.events if e.kind == "experiment"]
    assert len(experiments) == result.experiments
    assert all(isinstance(e.payload, ExperimentPayload) and e.payload.samples for e in experiments)
    gather = next(e for e in loaded.events if e.kind == "tool_call")
    assert isinstance(gather.payload, ToolCallPayload) and gather.payload.candidates
    verdicts = [e.payload for e in loaded.events if e.kind == "verdict"]
    assert all(isinstance(p, VerdictPayload) for p in verdicts)
    assert session_info(session).status == result.status


def test_an_older_result_without_set_aside_or_llm_still_reads() -> None:
    text = (EXAMPLE / "result.json").read_text()
    old = json.loads(text)
    assert "set_aside" not in old and "llm" not in old
    dumped = InvestigationResult.model_validate_json(text).model_dump()
    later = ("share_ci", "line", "diff", "commit", "commits", "package")  # culprit keys added since
    culprits = [{k: v for k, v in c.items() if k not in later} for c in dumped["culprits"]]
    assert {k: v for k, v in {**dumped, "culprits": culprits}.items() if k in old} == old
    added = ["unexplained_ci", "undecided", "not_ruled_out", "negligible", "carried", "rounds"]
    added += ["set_aside", "unresolved", "llm"]
    added += ["reproduction", "decomposition", "bisection", "rest", "releases", "time_moved"]
    assert [k for k in dumped if k not in old] == added  # keys only added
    assert dumped["set_aside"] == dumped["unresolved"] == [] and dumped["llm"] is None
    assert dumped["reproduction"] is dumped["decomposition"] is dumped["rounds"] is None
    assert dumped["bisection"] is None and dumped["negligible"] == dumped["carried"] == {}
    assert dumped["rest"] == [] and dumped["releases"] is None and dumped["time_moved"] == []
    assert all(c["share_ci"] is c["commit"] is None for c in dumped["culprits"])


def test_the_llm_part_keeps_the_engines_key_order_and_its_narrative() -> None:
    claim = {"candidate": "a-1", "weight": 9.0, "reason": "r", "status": "refuted", "evidence": []}
    usage = {"model": "m", "calls": 2, "prompt_tokens": 3, "completion_tokens": 4, "cost": 0.5}
    # finish() writes no narrative; the report node adds one, null when the model wrote none
    for llm in (
        {**usage, "claims": [claim]},
        {**usage, "claims": [claim], "narrative": None},
        {**usage, "claims": [claim], "narrative": "text"},
        {**usage, "later_counter": 1, "claims": [claim], "narrative": "text"},
    ):
        dumped = LLMResult.model_validate(llm).model_dump()
        assert dumped == llm and list(dumped) == list(llm)


def test_the_result_models_keep_in_step_with_the_state() -> None:
    from agent import state

    assert typing.get_args(Status) == typing.get_args(state.Status)
    ours, theirs = Claim.model_json_schema(), state.Claim.model_json_schema()
    assert (ours["properties"], ours["required"]) == (theirs["properties"], theirs["required"])


def test_a_rerun_result_json_is_listed(tmp_path: Path) -> None:
    copy = tmp_path / "20261203-120000-abcdef"
    shutil.copytree(EXAMPLE, copy)
    rerun = {"session": copy.name, "rerun_of": "x", "status": "confirmed", "holds": True}
    (copy / "result.json").write_text(json.dumps({**rerun, "checks": [], "launches": 4}))
    info = session_info(copy)
    assert (info.status, info.launches) == ("confirmed", 4)
    assert ResultSummary.model_validate(rerun).launches is None


def test_events_are_written_as_before_and_read_typed(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    transcript = Transcript(path)
    transcript.header({"session": "s", "symptom": {"text": "verify 29ms"}, "target": {}})
    transcript.event("gather", "tool_call", "diff", candidates=[{"id": "a-1", "kind": "hunk"}])
    transcript.event("experiment", "experiment", "launch 1", config="bad", samples=[1.0], log="l")
    transcript.event("judge", "verdict", "half", config="x", r=0.5, verdict="partial", launches=2)
    transcript.event("llm", "tool_result", "answer", reply={"text": "hi"}, usage={"calls": 1})
    transcript.event("chat", "tool_call", "model calls drop", candidate="a-1", reason="why")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert list(lines[0])[:3] == ["kind", "schema", "ts"]
    assert [list(e) for e in lines[1:]] == [["seq", "ts", "node", "kind", "text", "payload"]] * 5
    assert lines[1]["payload"] == {"candidates": [{"id": "a-1", "kind": "hunk"}]}
    loaded = read_transcript(path)
    kinds = [type(e.payload) for e in loaded.events]
    assert kinds[:4] == [ToolCallPayload, ExperimentPayload, VerdictPayload, ToolResultPayload]
    assert loaded.events[4].payload.model_extra == {"candidate": "a-1", "reason": "why"}
    assert [s.detail for s in steps(loaded)] == [
        "a-1",
        "samples [1]  log l",
        "r=0.50 verdict=partial launches=2",
        "",
        "",
    ]
    with pytest.raises(ValueError):
        transcript.event("plan", "musing", "not a kind the readers know")  # type: ignore[arg-type]


def test_a_payload_of_another_shape_still_replays_and_an_unknown_kind_is_a_clear_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "transcript.jsonl"
    header = json.loads((EXAMPLE / "transcript.jsonl").read_text().splitlines()[0])
    odd = {"seq": 1, "node": "experiment", "kind": "experiment", "text": "t"}
    lines = [header, {**odd, "payload": {"samples": "not a list", "log": "l"}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    event = read_transcript(path).events[0]
    assert type(event.payload) is Payload and event.payload.model_extra["log"] == "l"
    lines.append({**odd, "seq": 2, "kind": "musing", "payload": {}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(TranscriptError, match=r"transcript.jsonl:3 is not a transcript line"):
        read_transcript(path)


def test_the_committed_example_reads_typed() -> None:
    loaded = read_transcript(EXAMPLE / "transcript.jsonl")
    assert loaded.header.reasoner == "rules" and loaded.header.target is not None
    assert {type(e.payload) for e in loaded.events if e.kind == "experiment"} == {ExperimentPayload}
    assert [e.seq for e in loaded.events] == list(range(1, len(loaded.events) + 1))


def test_beside_a_suspected_set_the_kept_candidates_no_experiment_cleared_are_not_ruled_out() -> (
    None
):
    from types import SimpleNamespace

    from agent.report.finish import _not_ruled_out
    from agent.state import Hypothesis
    from tests.conftest import bare_state

    state = bare_state(
        hypotheses={
            cid: Hypothesis(candidate=cid, prior=1.0, reasons=[], status=status)
            for cid, status in [("a", "open"), ("b", "open"), ("c", "cleared"), ("d", "dropped")]
        },
        status="suspected",
    )
    suspected = [SimpleNamespace(id="a")]
    assert _not_ruled_out(state, suspected) == ["b"]  # type: ignore[arg-type]
    state.status = "confirmed"  # a confirmed set cleared the rest: nothing is left open
    assert _not_ruled_out(state, suspected) == []  # type: ignore[arg-type]
