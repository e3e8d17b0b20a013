"""A scripted fake of the Anthropic Messages API, for driving a real Claude Code offline.

Point the host at it with `ANTHROPIC_BASE_URL` (and any `ANTHROPIC_API_KEY`). Each
`POST /v1/messages` is handed to the script, which returns the assistant's content blocks:
`Text(...)` and `ToolUse(name, input)`. A reply with a tool use stops with `tool_use`, so the
host runs the tool and asks again with its result; a reply of text alone ends the turn. The
answer is streamed as server-sent events when the request asks for a stream, as the real API
does. Every request is kept in `requests`, so a test can read what the host sent (the tools it
listed, the tool results it got back). `caucus.testing.serve_fake` serves it.
"""

from __future__ import annotations

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
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class ToolUse:
    name: str
    input: dict[str, Any] = field(default_factory=dict)


Block = Text | ToolUse
Script = Callable[[dict[str, Any]], list[Block]]


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool result the host sent back so far, oldest first."""
    found = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            found += [c for c in content if isinstance(c, dict) and c.get("type") == "tool_result"]
    return found


def result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


def tool_names(request: dict[str, Any]) -> list[str]:
    return [str(t.get("name")) for t in request.get("tools", []) if isinstance(t, dict)]


class FakeAnthropic:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self.app = Starlette(
            routes=[
                Route("/v1/messages", self._messages, methods=["POST"]),
                Route("/v1/messages/count_tokens", self._count, methods=["POST"]),
                Route("/{path:path}", self._other, methods=["GET", "POST", "HEAD"]),
            ]
        )

    async def _count(self, _: Request) -> Response:
        return JSONResponse({"input_tokens": 100})

    async def _other(self, request: Request) -> Response:
        body = {"type": "error", "error": {"type": "not_found_error", "message": request.url.path}}
        return JSONResponse(body, status_code=404)

    async def _messages(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        blocks = self.script(body)
        number = next(self._ids)
        message = self._message(number, str(body.get("model", "claude")), blocks)
        if body.get("stream"):
            return StreamingResponse(self._events(message), media_type="text/event-stream")
        return JSONResponse(message)

    def _message(self, number: int, model: str, blocks: list[Block]) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        for i, block in enumerate(blocks):
            if isinstance(block, Text):
                content.append({"type": "text", "text": block.text})
            else:
                content.append(
                    {
                        "type": "tool_use",
                        "id": f"toolu_{number:04d}_{i}",
                        "name": block.name,
                        "input": block.input,
                    }
                )
        stop = "tool_use" if any(isinstance(b, ToolUse) for b in blocks) else "end_turn"
        return {
            "id": f"msg_{number:06d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20},
        }

    async def _events(self, message: dict[str, Any]) -> AsyncIterator[bytes]:
        def event(kind: str, data: dict[str, Any]) -> bytes:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()

        start = {**message, "content": [], "stop_reason": None}
        start["usage"] = {"input_tokens": 100, "output_tokens": 1}
        yield event("message_start", {"message": start})
        for index, block in enumerate(message["content"]):
            opening: dict[str, Any]
            delta: dict[str, Any]
            if block["type"] == "text":
                opening = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                opening = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            yield event("content_block_start", {"index": index, "content_block": opening})
            yield event("content_block_delta", {"index": index, "delta": delta})
            yield event("content_block_stop", {"index": index})
        stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
        yield event("message_delta", {"delta": stop, "usage": {"output_tokens": 20}})
        yield event("message_stop", {})
