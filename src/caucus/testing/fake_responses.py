"""A scripted fake of the OpenAI Responses API, for driving a real Codex offline.

Point Codex at it with a model provider of its own (`FakeResponses.codex_config(url)` gives
the `-c` overrides: `wire_api = "responses"`, no WebSocket, no retries). Each `POST
/v1/responses` is handed to the script, which returns what the model says: `Text(...)`,
`ToolUse(name, input)` (a function call) and `Custom(name, input)` (a free-form tool call,
as Codex's code-mode `exec` takes JavaScript). A reply with a call ends in `response.completed`
after it, so the host runs the tool and asks again with the output; a reply of text alone ends
the turn. The answer is streamed as server-sent events when the request asks for a stream, as
the real API does. Every request is kept in `requests`; `outputs` reads back what the host
handed the model from its tools. `caucus.testing.serve_fake` serves it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from caucus.testing.fake_anthropic import Text, ToolUse


@dataclass(frozen=True, slots=True)
class Custom:
    """A call of a free-form tool: its input is text, not JSON arguments."""

    name: str
    input: str


Item = Text | ToolUse | Custom
Script = Callable[[dict[str, Any]], list[Item]]
_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_CALLS = ("function_call", "custom_tool_call")


def outputs(request: dict[str, Any]) -> list[str]:
    """The text of every tool output the host sent back so far, oldest first."""
    found = []
    for item in request.get("input", []):
        if isinstance(item, dict) and item.get("type") in _OUTPUTS:
            output = item.get("output")
            if isinstance(output, list):
                output = "".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
            found.append(str(output))
    return found


def calls(request: dict[str, Any]) -> list[str]:
    """The name of every tool the model called so far in this conversation, oldest first."""
    return [
        str(item.get("name"))
        for item in request.get("input", [])
        if isinstance(item, dict) and item.get("type") in _CALLS
    ]


def offers(request: dict[str, Any], name: str) -> bool:
    """Whether the request offers the model a tool of this name, at any depth (Codex lists
    tools in namespaces, and in an `additional_tools` input item)."""
    text = json.dumps([request.get("tools", []), request.get("input", [])])
    return f'"name": "{name}"' in text


class FakeResponses:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self.app = Starlette(
            routes=[
                Route("/v1/responses", self._responses, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/{path:path}", self._other, methods=["GET", "POST", "HEAD"]),
            ]
        )

    @staticmethod
    def codex_config(url: str) -> list[str]:
        """`codex` arguments that make this fake its model (under Codex's default model name,
        so the host offers its tools as it does to users): a provider of its own, over HTTP
        (Codex tries a WebSocket first with OpenAI's), failing at once rather than retrying.
        Set `CAUCUS_FAKE_KEY` to anything in Codex's environment."""
        provider = (
            f'{{name="caucus-fake",base_url="{url}/v1",wire_api="responses",'
            'env_key="CAUCUS_FAKE_KEY",supports_websockets=false,'
            "request_max_retries=0,stream_max_retries=0}"
        )
        return ["-c", 'model_provider="fake"', "-c", f"model_providers.fake={provider}"]

    async def _models(self, _: Request) -> Response:
        return JSONResponse({"object": "list", "data": []})

    async def _other(self, request: Request) -> Response:
        error = {"message": f"no route {request.url.path}", "type": "invalid_request_error"}
        return JSONResponse({"error": error}, status_code=404)

    async def _responses(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        number = next(self._ids)
        items = [_item(number, i, item) for i, item in enumerate(self.script(body))]
        response = {
            "id": f"resp_{number:06d}",
            "object": "response",
            "status": "completed",
            "model": str(body.get("model", "caucus-fake")),
            "output": items,
            "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120},
        }
        if body.get("stream"):
            return Response(_events(response), media_type="text/event-stream")
        return JSONResponse(response)


def _item(number: int, index: int, item: Item) -> dict[str, Any]:
    ident = f"{number:04d}_{index}"
    if isinstance(item, Text):
        content = [{"type": "output_text", "text": item.text, "annotations": []}]
        return {"type": "message", "id": f"msg_{ident}", "role": "assistant", "content": content}
    if isinstance(item, Custom):
        return {
            "type": "custom_tool_call",
            "id": f"ctc_{ident}",
            "call_id": f"call_{ident}",
            "name": item.name,
            "input": item.input,
        }
    return {
        "type": "function_call",
        "id": f"fc_{ident}",
        "call_id": f"call_{ident}",
        "name": item.name,
        "arguments": json.dumps(item.input),
    }


def _events(response: dict[str, Any]) -> str:
    def event(data: dict[str, Any]) -> str:
        return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"

    opening = {**response, "status": "in_progress", "output": []}
    out = [event({"type": "response.created", "response": opening})]
    for index, item in enumerate(response["output"]):
        out.append(
            event({"type": "response.output_item.added", "output_index": index, "item": item})
        )
        if item["type"] == "message":
            text = item["content"][0]["text"]
            delta = {"type": "response.output_text.delta", "item_id": item["id"], "delta": text}
            out.append(event({**delta, "output_index": index, "content_index": 0}))
        out.append(
            event({"type": "response.output_item.done", "output_index": index, "item": item})
        )
    out.append(event({"type": "response.completed", "response": response}))
    return "".join(out)
