"""A model on any OpenAI-compatible `/v1/chat/completions` server (llama.cpp, vLLM, Ollama,
LM Studio, OpenAI), through the `openai` SDK, streaming: one completion per call
(`OpenAIModel`), and the native agent's backend, the one tool loop over it (`OpenAIBackend`).

Weak local models are met halfway: calls written as Hermes `<tool_call>` tags or fenced JSON in
the text are taken as calls (`toolcalls.py`), and consecutive user messages are sent as one.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import openai

from caucus.models.chat import ChatMessage, Role, ToolCall
from caucus.models.loop import ToolLoop
from caucus.models.seam import BackendError, Completion, Turn
from caucus.models.toolcalls import calls_in_text

log = logging.getLogger(__name__)


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


class OpenAIModel:
    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None,
        timeout: float = 600.0,
        client: openai.AsyncOpenAI | None = None,
        temperature: float | None = None,
        json_mode: bool = False,
    ) -> None:
        self.model = model
        # Answers to requests that offer no tools must be one JSON object (the server's JSON
        # mode: OpenAI, vLLM, llama.cpp, llama-cpp-python and Ollama take it).
        self._json_mode = json_mode
        self.base_url = base_url
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

    async def complete(self, request: Completion) -> Turn:
        tools, forced, answer_schema = request.tools, request.forced, request.answer_schema
        messages = request_messages(request.history)
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
        return Turn(content, tuple(calls))

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


class OpenAIBackend(ToolLoop):
    """The native agent's backend on an OpenAI-compatible server: the tool loop over
    `OpenAIModel` (the same arguments, and `start_with_tool`: ToolLoop's)."""

    def __init__(self, *, start_with_tool: str | None = None, **model: Any) -> None:
        super().__init__(OpenAIModel(**model), start_with_tool=start_with_tool)
        self.base_url: str = self.model.base_url

    model: OpenAIModel

    async def check(self) -> None:
        await self.model.check()


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return exc.message
