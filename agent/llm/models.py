"""Chat models behind one small interface: an OpenAI-compatible endpoint, or scripted answers.

`complete(messages, tools)` returns one reply: text and/or tool calls, and token usage. The
scripted and replay models ship with the package (as mini-swe-agent and SWE-agent do) so that
the LLM path can be run and tested without a paid endpoint.
"""

from __future__ import annotations

from concurrent.futures import TimeoutError as FutureTimeout
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field, ValidationError

from tools.daemon_pool import DaemonPool
from tools.errors import ToolError, first_problem
from tools.json_text import parse_json


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str  # raw JSON text, as the model wrote it


class Reply(BaseModel):
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)


class ModelError(ToolError):
    """The endpoint failed (HTTP error, timeout, refusal); the reasoner records and recovers."""

    def __init__(self, message: str, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable  # no answer at all (timed out, refused): not asked again


class ChatModel(Protocol):
    name: str

    def complete(self, messages: list[dict], tools: list[dict]) -> Reply: ...


class OpenAIModel:
    """Any OpenAI-compatible endpoint (OpenAI, or an SGLang / vLLM server)."""

    def __init__(
        self, base_url: str | None, model: str, api_key: str | None, timeout_s: float = 120.0
    ) -> None:
        self.base_url = base_url
        self.name = model
        self.api_key = api_key or "none"
        self.timeout_s = timeout_s

    def complete(self, messages: list[dict], tools: list[dict]) -> Reply:
        import openai

        try:
            with openai.OpenAI(
                base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=self.timeout_s
            ) as client:
                answer = self._within_time(client, messages, tools)
        except openai.APIStatusError as e:
            raise ModelError(f"the model endpoint answered HTTP {e.status_code}") from None
        except openai.APITimeoutError:
            raise ModelError(
                f"the model endpoint gave no answer in {self.timeout_s:g} s", unreachable=True
            ) from None
        except openai.APIConnectionError as e:
            reason = f"the model endpoint cannot be reached: {e}"
            raise ModelError(reason, unreachable=True) from None
        except openai.APIError as e:
            raise ModelError(f"the model endpoint failed: {type(e).__name__}: {e}") from None
        except RecursionError:  # json.loads of a body nested 100,000 deep, in the SDK
            raise ModelError("the model endpoint's reply is nested too deep to read") from None
        try:
            return _reply(answer)
        except (AttributeError, TypeError, ValueError) as e:  # ValueError: pydantic's too
            what = first_problem(e) if isinstance(e, ValidationError) else type(e).__name__
            raise ModelError(f"the model endpoint's reply is no chat completion ({what})") from None

    def _within_time(self, client: Any, messages: list[dict], tools: list[dict]) -> Any:
        """The completion within timeout_s in all: the client's timeout is per read, and an
        endpoint that sends its body a few bytes at a time, without end, hung the run."""
        pool = DaemonPool(1, "llm")
        create = client.chat.completions.create
        future = pool.submit(
            partial(create, model=self.name, messages=messages, tools=tools, tool_choice="auto")
        )
        try:
            return future.result(timeout=self.timeout_s)
        except FutureTimeout:
            client.close()  # the connection closes under the reading thread: it ends
            raise ModelError(
                f"the model endpoint gave no answer in {self.timeout_s:g} s", unreachable=True
            ) from None
        finally:
            pool.shutdown()


def _reply(answer: Any) -> Reply:
    """The SDK's reply object (built without checking what the endpoint sent) as ours."""
    if not answer.choices:
        return Reply()
    message = answer.choices[0].message
    calls = [
        ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments or "")
        for c in (message.tool_calls or [])
        if getattr(c, "function", None)
    ]
    usage = answer.usage
    return Reply(
        content=message.content or "",
        tool_calls=calls,
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
    )


class ScriptedModel:
    """Plays back given replies in order; past the end it answers with nothing."""

    def __init__(self, replies: list[dict[str, Any]], name: str = "scripted") -> None:
        self.replies = [Reply.model_validate(r) for r in replies]
        self.name = name
        self.calls = 0

    def complete(self, messages: list[dict], tools: list[dict]) -> Reply:
        self.calls += 1
        return self.replies[self.calls - 1] if self.calls <= len(self.replies) else Reply()


def replay_model(session: Path) -> ScriptedModel:
    """The LLM replies recorded in a saved session, played back in order."""
    replies = []
    for line in (session / "transcript.jsonl").read_text().splitlines()[1:]:
        try:
            event = parse_json(line)
        except ValueError:
            continue
        if event.get("kind") == "tool_result" and "reply" in (event.get("payload") or {}):
            replies.append(event["payload"]["reply"])
    return ScriptedModel(replies, name=f"replay of {session.name}")
