"""A scripted fake of an OpenAI-compatible server, for driving `caucus agent` offline.

Point the agent at it (`--backend openai --base-url <url>/v1`). Each
`POST /v1/chat/completions` is handed to the script, which returns what the model says:
`Say(text)` and `Call(name, arguments)` blocks, `Stall(seconds)` to hang mid-stream, or
`Status(code, message)` to answer with an error. Answers are streamed as server-sent chunks
when the request asks for a stream (text in pieces; each tool call's id and name first, then its
arguments in two pieces), as real servers do; `repeat_names=True` repeats each call's id and
name on every piece, as llama-cpp-python's server does. Every request is kept in `requests`;
`streaming` counts the answers being streamed now and `abandoned` those whose client went away
before their end (a model server generates on for a client that keeps its connection open).
`caucus.testing.serve_fake` serves it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass(frozen=True, slots=True)
class Say:
    text: str


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Status:
    code: int
    message: str


@dataclass(frozen=True, slots=True)
class Stall:
    """Stop streaming here for `seconds` (the text before it is sent first): a model that
    hangs mid-answer."""

    seconds: float


Said = Say | Call | Status | Stall
Script = Callable[[dict[str, Any]], list[Said]]


def last_user(request: dict[str, Any]) -> str:
    """The newest user message's text in a request."""
    for message in reversed(request.get("messages", [])):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every `role: tool` message the client sent back, oldest first."""
    return [m for m in request.get("messages", []) if m.get("role") == "tool"]


def offered(request: dict[str, Any]) -> list[str]:
    """The names of the tools a request offered."""
    return [str(t.get("function", {}).get("name")) for t in request.get("tools", [])]


class FakeOpenAI:
    def __init__(
        self,
        script: Script,
        *,
        models: tuple[str, ...] = ("fake-model",),
        repeat_names: bool = False,
    ) -> None:
        self.script = script
        self.models = models
        self.repeat_names = repeat_names
        self.requests: list[dict[str, Any]] = []
        self.streaming = 0  # answers being streamed now: one the client dropped ends at once
        self.abandoned = 0  # answers whose client went away before their end
        self._ids = itertools.count(1)
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._complete, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    async def _models(self, _: Request) -> Response:
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
        return JSONResponse({"object": "list", "data": data})

    async def _complete(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        said = self.script(body)
        failed = next((s for s in said if isinstance(s, Status)), None)
        if failed is not None:
            error = {"message": failed.message, "type": "server_error", "code": failed.code}
            return JSONResponse({"error": error}, status_code=failed.code)
        number = next(self._ids)
        model = str(body.get("model", "fake-model"))
        if body.get("stream"):
            chunks = self._counted(self._chunks(number, model, said))
            return StreamingResponse(chunks, media_type="text/event-stream")
        return JSONResponse(self._whole(number, model, said))

    @staticmethod
    def _calls(number: int, said: list[Said]) -> list[dict[str, Any]]:
        return [
            {
                "id": f"call_{number}_{i}",
                "type": "function",
                "function": {"name": s.name, "arguments": json.dumps(s.arguments)},
            }
            for i, s in enumerate(s for s in said if isinstance(s, Call))
        ]

    def _whole(self, number: int, model: str, said: list[Said]) -> dict[str, Any]:
        calls = self._calls(number, said)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(s.text for s in said if isinstance(s, Say)),
        }
        if calls:
            message["tool_calls"] = calls
        return {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
            ],
        }

    async def _counted(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """The stream, counted while it runs: Starlette cancels it when the client goes."""
        self.streaming += 1
        finished = False
        try:
            async for piece in chunks:
                yield piece
            finished = True
        finally:
            self.streaming -= 1
            self.abandoned += not finished

    async def _chunks(self, number: int, model: str, said: list[Said]) -> AsyncIterator[bytes]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            body = {
                "id": f"chatcmpl-{number}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(body)}\n\n".encode()

        yield chunk({"role": "assistant", "content": ""})
        for block in said:
            if isinstance(block, Stall):
                await asyncio.sleep(block.seconds)
            elif isinstance(block, Say):
                for start in range(0, len(block.text), 16):
                    yield chunk({"content": block.text[start : start + 16]})
        calls = self._calls(number, said)
        for index, call in enumerate(calls):
            head = {"index": index, "id": call["id"], "type": "function"}
            name = {"name": call["function"]["name"]}
            yield chunk({"tool_calls": [{**head, "function": name}]})
            args = call["function"]["arguments"]
            for part in (args[: len(args) // 2], args[len(args) // 2 :]):
                piece = {**head, "function": {**name, "arguments": part}}
                if not self.repeat_names:
                    piece = {"index": index, "function": {"arguments": part}}
                yield chunk({"tool_calls": [piece]})
        yield chunk({}, "tool_calls" if calls else "stop")
        yield b"data: [DONE]\n\n"
