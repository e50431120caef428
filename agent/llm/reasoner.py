"""The LLM reasoner: asks the model to rank the hypotheses through one validated tool call.

An invalid answer (malformed JSON, an unknown tool, an unknown candidate, no tool call, an HTTP
error) is answered with an error the model can correct, a bounded number of times; then the
rules reasoner's priors stand for that step. Every call, its tokens and cost are recorded.
The model can call no other tool: nothing it says runs anything.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources

from pydantic import BaseModel, Field, ValidationError

from agent.gather import describe
from agent.llm.models import ChatModel, ModelError, Reply
from agent.state import InvestigationState
from tools.errors import first_problem

MAX_TRIES = 5  # answers (and failed calls) per step before the rules reasoner takes over
SET_PRIORS = {
    "type": "function",
    "function": {
        "name": "set_priors",
        "description": "Rank every candidate: weight 0 (cannot matter) to 10 (almost certainly "
        "it).",
        "parameters": {
            "type": "object",
            "required": ["rankings"],
            "properties": {
                "rankings": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["candidate", "weight", "reason"],
                        "properties": {
                            "candidate": {"type": "string"},
                            "weight": {"type": "number"},
                            "reason": {"type": "string"},
                        },
                    },
                }
            },
        },
    },
}


WRITE_SUMMARY = {
    "type": "function",
    "function": {
        "name": "write_summary",
        "description": "The investigation's narrative, for the report.",
        "parameters": {
            "type": "object",
            "required": ["text"],
            "properties": {"text": {"type": "string"}},
        },
    },
}
NARRATIVE_TRIES = 2


CHOOSE = {
    "type": "function",
    "function": {
        "name": "choose_experiment",
        "description": "Which of the offered experiments to run next.",
        "parameters": {
            "type": "object",
            "required": ["option"],
            "properties": {"option": {"type": "integer"}, "reason": {"type": "string"}},
        },
    },
}


class Choice(BaseModel):
    option: int
    reason: str = ""


class Summary(BaseModel):
    text: str = Field(min_length=1, max_length=4000)


class Ranking(BaseModel):
    candidate: str
    weight: float = Field(ge=0, le=10)
    reason: str


class SetPriors(BaseModel):
    rankings: list[Ranking]


class Usage(BaseModel):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


def _template(name: str) -> str:
    return resources.files("prompts").joinpath(name).read_text()


def _candidates_text(state: InvestigationState) -> str:
    rows = []
    for c in state.candidates:
        if state.hypotheses[c.id].status != "open":
            continue
        if c.kind == "hunk":
            body = "\n".join(c.hunk_lines()[:40])
            rows.append(f"- {c.id}: {c.file}\n{body}")
        else:
            rows.append(f"- {c.id}: {c.kind} {c.name}: {c.good!r} -> {c.bad!r}")
    return "\n".join(rows)


class LLMReasoner:
    def __init__(
        self,
        model: ChatModel,
        log: Callable[..., None],
        max_calls: int = 20,
        max_cost: float | None = None,
        price_per_mtok: tuple[float, float] = (0, 0),
    ):
        self.model = model
        self.log = log
        self.max_calls = max_calls
        self.max_cost = max_cost
        self.price = price_per_mtok
        self.usage = Usage()
        self.unreachable: str | None = None  # why the model is not asked again, once it is

    def _spent(self) -> str | None:
        if self.unreachable:
            return self.unreachable
        if self.usage.calls >= self.max_calls:
            return f"--max-llm-calls {self.max_calls} reached"
        if self.max_cost is not None and self.usage.cost >= self.max_cost:
            return f"--max-llm-cost {self.max_cost:g} reached"
        return None

    def _call(self, messages: list[dict], tools: list[dict] | None = None) -> Reply | None:
        self.usage.calls += 1
        try:
            reply = self.model.complete(messages, tools or [SET_PRIORS])
        except ModelError as e:
            if e.unreachable:  # each further call would wait as long again, for nothing
                self.unreachable = f"{e}: not asked again"
            self.log(
                "hypothesize",
                "error",
                f"model call failed: {e}; "
                + ("the rules reasoner goes on alone" if e.unreachable else "trying again"),
                model=self.model.name,
            )
            return None
        self.usage.prompt_tokens += reply.prompt_tokens
        self.usage.completion_tokens += reply.completion_tokens
        cost = (reply.prompt_tokens * self.price[0] + reply.completion_tokens * self.price[1]) / 1e6
        self.usage.cost += cost
        self.log(
            "hypothesize",
            "tool_result",
            f"model {self.model.name} answered "
            f"({reply.prompt_tokens}+{reply.completion_tokens} tokens, ${cost:.4f})",
            reply=reply.model_dump(),
            usage=self.usage.model_dump(),
        )
        return reply

    def rank(self, state: InvestigationState) -> list[Ranking] | None:
        ids = [cid for cid, h in state.hypotheses.items() if h.status == "open"]
        if not ids:
            return None
        user = _template("rank_hypotheses_user.txt").format(
            symptom=state.symptom.text,
            facts="\n".join(describe(state)),
            candidates=_candidates_text(state),
            dropped="\n".join(f"- {d.candidate}: {d.reason}" for d in state.dropped) or "none",
            ids=", ".join(ids),
        )
        messages: list[dict] = [
            {"role": "system", "content": _template("rank_hypotheses.txt")},
            {"role": "user", "content": user},
        ]
        for _ in range(MAX_TRIES):
            spent = self._spent()
            if spent:
                self.log(
                    "hypothesize",
                    "error",
                    f"the model is not asked ({spent}): the rules reasoner's priors stand",
                )
                return None
            reply = self._call(messages)
            if reply is None:
                continue
            problem, rankings = self._check(reply, [c.id for c in state.candidates])
            if rankings is not None:
                return rankings
            self.log("hypothesize", "error", f"invalid model answer: {problem}; asked again")
            messages += self._correction(reply, problem)
        self.log(
            "hypothesize",
            "error",
            "no valid ranking from the model: the rules reasoner's priors stand for this step",
        )
        return None

    def choose(self, question: str, options: list[str]) -> int | None:
        """The model picks one of the planner's experiments (1-based); None keeps the default."""
        if self._spent():
            return None
        listing = "\n".join(f"{i}. {option}" for i, option in enumerate(options, 1))
        messages = [
            {"role": "system", "content": _template("choose_experiment.txt")},
            {"role": "user", "content": f"{question}\n<data>\n{listing}\n</data>"},
        ]
        reply = self._call(messages, [CHOOSE])
        call = reply.tool_calls[0] if reply and reply.tool_calls else None
        if call is None or call.name != "choose_experiment":
            self.log("plan", "error", "the model chose no experiment: the planner's order stands")
            return None
        try:
            choice = Choice.model_validate_json(call.arguments)
        except ValidationError:
            self.log(
                "plan", "error", "invalid choose_experiment arguments: the planner's order stands"
            )
            return None
        if not 1 <= choice.option <= len(options):
            self.log(
                "plan",
                "error",
                f"option {choice.option} was not offered: the planner's order stands",
            )
            return None
        self.log(
            "plan",
            "thought",
            f"the model chose option {choice.option}: {choice.reason or 'no reason given'}",
            option=choice.option,
        )
        return choice.option

    def narrate(self, result: dict) -> str | None:
        """The report's narrative, in the model's words (the verdict stays the engine's)."""
        shown = {
            k: result.get(k)
            for k in ("status", "metric", "culprits", "dropped", "unexplained_share", "launches")
        }
        messages: list[dict] = [
            {"role": "system", "content": _template("narrative.txt")},
            {"role": "user", "content": f"<data>\n{json.dumps(shown, default=str)}\n</data>"},
        ]
        for _ in range(NARRATIVE_TRIES):
            if self._spent():
                return None
            reply = self._call(messages, [WRITE_SUMMARY])
            if reply is None:
                continue
            call = reply.tool_calls[0] if reply.tool_calls else None
            if call is not None and call.name == "write_summary":
                try:
                    return Summary.model_validate_json(call.arguments).text
                except ValidationError:
                    problem = 'write_summary needs {"text": "..."}'
            else:
                problem = "call write_summary with the narrative"
            self.log("report", "error", f"invalid model answer: {problem}; asked again")
            messages += self._correction(reply, problem)
        self.log("report", "error", "no narrative from the model: the report has none")
        return None

    @staticmethod
    def _check(reply: Reply, ids: list[str]) -> tuple[str, list[Ranking] | None]:
        if not reply.tool_calls:
            return "no tool call (call set_priors)", None
        call = reply.tool_calls[0]
        if call.name != "set_priors":
            return f"unknown tool {call.name!r}: the only tool is set_priors", None
        try:
            parsed = SetPriors.model_validate_json(call.arguments)
        except ValidationError as e:
            return f"set_priors arguments are invalid: {first_problem(e)}", None
        unknown = [r.candidate for r in parsed.rankings if r.candidate not in ids]
        if unknown:
            return f"unknown candidate ids {unknown}; use only {ids}", None
        return "", parsed.rankings

    @staticmethod
    def _correction(reply: Reply, problem: str) -> list[dict]:
        if not reply.tool_calls:
            return [
                {"role": "assistant", "content": reply.content or ""},
                {"role": "user", "content": f"Error: {problem}."},
            ]
        calls = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ]
        return [
            {"role": "assistant", "content": reply.content or None, "tool_calls": calls},
            *[
                {"role": "tool", "tool_call_id": c.id, "content": json.dumps({"error": problem})}
                for c in reply.tool_calls
            ],
        ]
