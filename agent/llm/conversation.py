"""Free text in a chat: the model answers and may act through three validated tools."""

from __future__ import annotations

import json
from importlib import resources

from pydantic import BaseModel, Field, ValidationError

from agent.gather import describe
from agent.llm.reasoner import LLMReasoner
from agent.state import InvestigationState


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


STR = {"type": "string"}
TOOLS = [
    _tool(
        "drop_hypothesis",
        "Drop a hypothesis, with the reason.",
        {"candidate": STR, "reason": STR},
        ["candidate", "reason"],
    ),
    _tool("test_hypothesis", "Test this hypothesis first.", {"candidate": STR}, ["candidate"]),
    _tool(
        "suggest_env",
        "Try NAME=VALUE on the bad state (one launch, approved first).",
        {"name": STR, "value": STR},
        ["name", "value"],
    ),
]


class Drop(BaseModel):
    candidate: str
    reason: str = Field(min_length=1)


class Test(BaseModel):
    candidate: str


class Suggest(BaseModel):
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    value: str


ARGS: dict[str, type[Drop | Test | Suggest]] = {
    "drop_hypothesis": Drop,
    "test_hypothesis": Test,
    "suggest_env": Suggest,
}


class Answer(BaseModel):
    text: str
    actions: list[tuple[str, dict]]  # (tool name, validated arguments)
    errors: list[str]


def _summary(state: InvestigationState) -> str:
    lines = describe(state) + [f"phase {state.phase}, {state.launches} launches"]
    lines += [
        f"{cid}: {h.status}, prior {h.prior:.2g}; {'; '.join(h.evidence[-2:] or h.reasons)}"
        for cid, h in state.hypotheses.items()
    ]
    return "\n".join(lines)


def converse(
    reasoner: LLMReasoner, state: InvestigationState, question: str, known: set[str]
) -> Answer:
    system = resources.files("prompts").joinpath("chat.txt").read_text()
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": f"<data>\n{_summary(state)}\n</data>\n\n{question}"},
    ]
    reply = reasoner._call(messages, TOOLS)
    if reply is None:
        return Answer(text="", actions=[], errors=["the model endpoint failed"])
    actions, errors = [], []
    for call in reply.tool_calls:
        model = ARGS.get(call.name)
        if model is None:
            errors.append(f"unknown tool {call.name!r} ignored")
            continue
        try:
            args = model.model_validate_json(call.arguments)
        except ValidationError as e:
            errors.append(f"{call.name}: invalid arguments ({e.errors()[0]['msg']}) ignored")
            continue
        if isinstance(args, Drop | Test) and args.candidate not in known:
            errors.append(f"{call.name}: unknown candidate {args.candidate!r} ignored")
            continue
        actions.append((call.name, json.loads(args.model_dump_json())))
    return Answer(text=reply.content, actions=actions, errors=errors)
