"""The transcript's lines as models: the header, and one event model per kind, each with the
payload fields that replay, the session list and the report read.

A payload keeps every field it was written with (those not typed here too); a payload whose
typed fields do not validate (a transcript written by another version) is read as a plain
`Payload`, so that replay still shows the event.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

EventKind = Literal[
    "thought", "tool_call", "tool_result", "hypothesis", "experiment", "verdict", "user", "error"
]


class Payload(BaseModel):
    """An event's payload: its fields as written (`model_extra`), some typed below."""

    model_config = ConfigDict(extra="allow")


class CandidateRef(Payload):
    id: str = "?"


class ThoughtPayload(Payload):
    config: str | None = None  # plan: the configuration launched next
    option: int | None = None  # plan: the planner's option the model chose
    round: int | None = None  # plan: the round the launch is in ([cluster] slots: several)


class ToolCallPayload(Payload):
    candidates: list[CandidateRef] | None = None  # gather: the diff's candidates


class ToolResultPayload(Payload):
    log: str | None = None  # gather: the bad state's server log
    samples: list[float] | None = None
    reply: dict[str, Any] | None = None  # the LLM's answer (--llm-replay plays it back)
    usage: dict[str, Any] | None = None


class HypothesisPayload(Payload):
    candidate: str | None = None
    prior: float | None = None
    weight: float | None = None  # the model's ranking, 0-10
    status: str | None = None  # report: confirmed, suspected or cleared


class ExperimentPayload(Payload):
    config: str | None = None  # the configuration's label
    held: list[str] | None = None
    base: str | None = None
    value: float | None = None
    samples: list[float] | None = None  # per-request values
    log: str | None = None
    was: float | None = None  # rerun: the original session's mean
    spec: dict[str, Any] | None = None  # chat: the experiment the user asked for
    ran_on: str | None = None  # the cluster node it ran on (its id, shortened, @ host)


class VerdictPayload(Payload):
    config: str | None = None
    r: float | None = None  # the share of the gap restored
    verdict: str | None = None
    launches: int | None = None
    check: str | None = None  # rerun: the check, whether it holds, the gap
    holds: bool | None = None
    gap: float | None = None


class UserPayload(Payload):
    candidate: str | None = None


class ErrorPayload(Payload):
    model: str | None = None  # the LLM whose call failed


class _Event(BaseModel):
    seq: int = 0  # consecutive from 1
    ts: float | None = None
    node: str = "?"
    text: str = ""  # the sentence a reviewer reads


def _payload(typed: type[Payload]) -> Any:
    return Field(default_factory=typed, union_mode="left_to_right")


class ThoughtEvent(_Event):
    kind: Literal["thought"]
    payload: ThoughtPayload | Payload = _payload(ThoughtPayload)


class ToolCallEvent(_Event):
    kind: Literal["tool_call"]
    payload: ToolCallPayload | Payload = _payload(ToolCallPayload)


class ToolResultEvent(_Event):
    kind: Literal["tool_result"]
    payload: ToolResultPayload | Payload = _payload(ToolResultPayload)


class HypothesisEvent(_Event):
    kind: Literal["hypothesis"]
    payload: HypothesisPayload | Payload = _payload(HypothesisPayload)


class ExperimentEvent(_Event):
    kind: Literal["experiment"]
    payload: ExperimentPayload | Payload = _payload(ExperimentPayload)


class VerdictEvent(_Event):
    kind: Literal["verdict"]
    payload: VerdictPayload | Payload = _payload(VerdictPayload)


class UserEvent(_Event):
    kind: Literal["user"]
    payload: UserPayload | Payload = _payload(UserPayload)


class ErrorEvent(_Event):
    kind: Literal["error"]
    payload: ErrorPayload | Payload = _payload(ErrorPayload)


Event = Annotated[
    ThoughtEvent
    | ToolCallEvent
    | ToolResultEvent
    | HypothesisEvent
    | ExperimentEvent
    | VerdictEvent
    | UserEvent
    | ErrorEvent,
    Field(discriminator="kind"),
]
EVENT: TypeAdapter[Event] = TypeAdapter(Event)


class HeaderSymptom(Payload):
    text: str | None = None


class HeaderTarget(Payload):
    repo: str | None = None
    good: str | None = None
    good_sha: str | None = None


class TranscriptHeader(Payload):
    """Line 1: the schema, when, and what was investigated (its config, versions: extra)."""

    kind: Literal["header"]
    transcript_schema: str = Field("", alias="schema")
    ts: float | None = None
    session: str | None = None
    rerun_of: str | None = None  # replay --rerun: the session re-measured
    symptom: HeaderSymptom | None = None
    target: HeaderTarget | None = None
    reasoner: str | None = "?"  # rules, or llm (model)
    lab: str | None = None
