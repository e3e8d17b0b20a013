"""A backend on any OpenAI-compatible `/v1/chat/completions` server (llama.cpp, vLLM, Ollama,
LM Studio, OpenAI), through the `openai` SDK, streaming.

A run is a bounded tool loop: the tools are listed at the start of the run; each answer that
calls tools is followed by their results (`role: tool`; a tool's failure goes back to the
model as error text, never ends the run); at most MAX_TOOL_ROUNDS rounds. The request after
the last round withdraws the tools and says so in a *user* message (chat templates such as
llama.cpp's refuse a system message after the first), and a tool call in that answer is a
backend error. Weak local models are met halfway: calls written as Hermes `<tool_call>` tags or
fenced JSON in the text are taken as calls (`toolcalls.py`), and consecutive user messages are
sent as one.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai

from caucus.runtime.backends.base import BackendError, MessageSink, RunOutcome
from caucus.runtime.backends.toolcalls import calls_in_text
from caucus.runtime.chat import ChatMessage, Role, ToolCall, assistant, tool_result
from caucus.runtime.tools.executor import ToolExecutor, ToolObserver, ToolResult, ToolSpec

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 8
BUDGET_NOTE = (
    "Tool budget exhausted: you cannot call any more tools in this turn. Answer now with what "
    "you have found so far."
)


@dataclass(slots=True)
class _Streamed:
    content: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)


def request_messages(history: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """The history as the server takes it, consecutive user messages joined into one."""
    out: list[dict[str, Any]] = []
    for message in history:
        wire = message.wire()
        if out and message.role is Role.USER and out[-1]["role"] == "user":
            out[-1] = {**out[-1], "content": f"{out[-1]['content']}\n\n{message.content}"}
        else:
            out.append(wire)
    return out


class OpenAIBackend:
    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None,
        timeout: float = 600.0,
        client: openai.AsyncOpenAI | None = None,
        start_with_tool: str | None = None,
        temperature: float | None = None,
        json_mode: bool = False,
    ) -> None:
        self.model = model
        # Answers to requests that offer no tools must be one JSON object (the server's JSON
        # mode: OpenAI, vLLM, llama.cpp, llama-cpp-python and Ollama take it).
        self._json_mode = json_mode
        self.base_url = base_url
        # The agent's very first request must call this tool (forced tool choice): for an
        # agent that has to act as it starts, on a model that might not otherwise.
        self._start_tool = start_with_tool
        self._temperature = temperature
        self._client = client or openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",  # local servers take any key
            timeout=timeout,
            max_retries=1,
        )
        self._ids = itertools.count(1)

    async def check(self) -> None:
        """Raise BackendError, saying what to do, if the server cannot be reached."""
        try:
            await self._client.models.list()
        except openai.APIConnectionError as exc:
            raise BackendError(
                f"cannot reach the model server at {self.base_url} ({exc}); start it, or give "
                "--base-url"
            ) from None
        except openai.AuthenticationError:
            raise BackendError(
                f"the model server at {self.base_url} refused the API key; give the variable "
                "that holds it with --api-key-env"
            ) from None
        except openai.APIStatusError as exc:
            # Some servers have no model list; they answered, so they are there.
            log.debug("the model list answered %s", exc.status_code)

    async def close(self) -> None:
        await self._client.close()

    async def run(
        self,
        history: Sequence[ChatMessage],
        sink: MessageSink,
        tools: ToolExecutor,
        observer: ToolObserver | None = None,
        *,
        answer_schema: Mapping[str, Any] | None = None,
    ) -> RunOutcome:
        """`answer_schema`, in JSON mode: the schema the answer must meet, sent inside
        response_format as llama.cpp's server takes it (it constrains the answer to it)."""
        offered = await tools.list_tools()
        messages = request_messages(history)
        rounds = 0
        while True:
            spent = bool(offered) and rounds >= MAX_TOOL_ROUNDS
            if spent:
                messages.append({"role": "user", "content": BUDGET_NOTE})
            usable = [] if spent else offered
            forced, self._start_tool = self._start_tool, None
            if forced is not None and forced not in {t.name for t in usable}:
                log.warning("--start-with-tool %s: no such tool is offered", forced)
                forced = None
            content, calls = await self._complete(messages, usable, forced, answer_schema)
            if not calls:
                reply = assistant(content)
                await sink.put(reply)
                return RunOutcome(content)
            if spent:
                raise BackendError(
                    f"the model called {calls[0].name!r} after its {MAX_TOOL_ROUNDS} tool rounds "
                    "were spent"
                )
            asked = assistant(content, tuple(calls))
            await sink.put(asked)
            messages.append(asked.wire())
            for call in calls:
                result = await self._call(tools, call, observer)
                answer = tool_result(call, result)
                await sink.put(answer)
                messages.append(answer.wire())
            rounds += 1

    async def _call(
        self, tools: ToolExecutor, call: ToolCall, observer: ToolObserver | None
    ) -> str:
        if observer is not None:
            observer.called(call)
        if "__invalid_arguments__" in call.arguments:
            result = ToolResult(
                f"the arguments were not valid JSON: {call.arguments['__invalid_arguments__']}",
                is_error=True,
            )
        else:
            try:
                result = await tools.call(call.name, call.arguments)
            except Exception as exc:  # the executor broke: the model hears it as an error
                result = ToolResult(f"{type(exc).__name__}: {exc}", is_error=True)
        if observer is not None:
            observer.answered(call, result)
        return f"Error: {result.content}" if result.is_error else result.content

    async def _complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        forced: str | None = None,
        answer_schema: Mapping[str, Any] | None = None,
    ) -> tuple[str, list[ToolCall]]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True}
        if tools:
            kwargs["tools"] = [t.wire() for t in tools]
        elif self._json_mode:
            kwargs["response_format"] = {"type": "json_object"}
            if answer_schema is not None:
                kwargs["response_format"]["schema"] = dict(answer_schema)
        if self._temperature is not None:
            kwargs["temperature"] = self._temperature
        if forced is not None:
            kwargs["tool_choice"] = {"type": "function", "function": {"name": forced}}
        streamed = _Streamed()
        try:
            stream = await self._client.chat.completions.create(**kwargs)
            async for chunk in stream:
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta
                if delta.content:
                    streamed.content.append(delta.content)
                for part in delta.tool_calls or ():
                    slot = streamed.calls.setdefault(
                        part.index, {"id": None, "name": "", "args": []}
                    )
                    if part.id:
                        slot["id"] = part.id
                    if part.function is not None:
                        # OpenAI sends a call's name once; llama-cpp-python repeats it
                        # on every chunk, which must not make "saysay".
                        if part.function.name and part.function.name != slot["name"]:
                            slot["name"] += part.function.name
                        if part.function.arguments:
                            slot["args"].append(part.function.arguments)
        except openai.APIConnectionError as exc:
            raise BackendError(f"cannot reach the model server at {self.base_url}: {exc}") from None
        except openai.APIStatusError as exc:
            raise BackendError(
                f"the model server answered {exc.status_code}: {_detail(exc)}"
            ) from None
        content = "".join(streamed.content)
        calls = [self._structured(slot) for _, slot in sorted(streamed.calls.items())]
        if not calls and tools:
            content, calls = calls_in_text(content, {t.name for t in tools}, self._new_id)
        return content, calls

    def _structured(self, slot: dict[str, Any]) -> ToolCall:
        text = "".join(slot["args"]).strip()
        try:
            args = json.loads(text) if text else {}
        except ValueError:
            args = None
        if not isinstance(args, dict):
            args = {"__invalid_arguments__": text[:500]}
        return ToolCall(slot["id"] or self._new_id(), slot["name"], args)

    def _new_id(self) -> str:
        return f"call_{next(self._ids)}"


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return exc.message
