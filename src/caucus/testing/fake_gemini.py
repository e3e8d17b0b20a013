"""A scripted fake of the Gemini API (`generateContent`), for driving a real Gemini CLI offline.

Point the host at it with `GOOGLE_GEMINI_BASE_URL` and any `GEMINI_API_KEY`, and settings that
select the API-key sign-in (`FakeGemini.settings()`): Gemini CLI reads a base URL alone as a
gateway it refuses in a fresh home. Each `POST /v1beta/models/<model>:generateContent` or
`:streamGenerateContent` is handed to the script, which returns the model's parts: `Text(...)`
and `ToolUse(name, input)` (a function call). The host runs each call and asks again with its
response; a reply of text alone ends the turn. Streams are server-sent events, as the real API
sends them (`?alt=sse`). Every request is kept in `requests`; `responses` reads back what the
host handed the model from its tools. `caucus.testing.serve_fake` serves it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from caucus.testing.fake_anthropic import Text, ToolUse

Part = Text | ToolUse
Script = Callable[[dict[str, Any]], list[Part]]


def declared(request: dict[str, Any]) -> list[str]:
    """The name of every function the request offers the model."""
    return [
        str(d.get("name"))
        for tool in request.get("tools", [])
        if isinstance(tool, dict)
        for d in tool.get("functionDeclarations", [])
        if isinstance(d, dict)
    ]


def _parts(request: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [
        part[key]
        for content in request.get("contents", [])
        if isinstance(content, dict)
        for part in content.get("parts", [])
        if isinstance(part, dict) and isinstance(part.get(key), dict)
    ]


def called(request: dict[str, Any]) -> list[str]:
    """The name of every function the model called so far in this conversation, oldest first."""
    return [str(call.get("name")) for call in _parts(request, "functionCall")]


def responses(request: dict[str, Any]) -> list[str]:
    """What the host sent back for each call, oldest first: the `output` it reports (Gemini
    CLI puts a tool's text there), else the whole response as JSON."""
    found = []
    for answer in _parts(request, "functionResponse"):
        response = answer.get("response")
        output = response.get("output") if isinstance(response, dict) else None
        found.append(output if isinstance(output, str) else json.dumps(response))
    return found


class FakeGemini:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.app = Starlette(
            routes=[
                Route("/{version}/models/{call}", self._models, methods=["POST"]),
                Route("/{path:path}", self._other, methods=["GET", "POST", "HEAD"]),
            ]
        )

    @staticmethod
    def settings() -> dict[str, Any]:
        """What Gemini CLI's settings.json needs, beside its servers, to use the fake."""
        return {"security": {"auth": {"selectedType": "gemini-api-key"}}}

    async def _other(self, request: Request) -> Response:
        return _error(404, f"no route {request.url.path}", "NOT_FOUND")

    async def _models(self, request: Request) -> Response:
        model, _, method = request.path_params["call"].partition(":")
        if method == "countTokens":
            return JSONResponse({"totalTokens": 100})
        if method not in ("generateContent", "streamGenerateContent"):
            return _error(404, f"no method {method!r}", "NOT_FOUND")
        body = await request.json()
        self.requests.append(body)
        answer = {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [_part(p) for p in self.script(body)]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 100,
                "candidatesTokenCount": 20,
                "totalTokenCount": 120,
            },
            "modelVersion": model,
        }
        if method == "streamGenerateContent":
            return Response(f"data: {json.dumps(answer)}\r\n\r\n", media_type="text/event-stream")
        return JSONResponse(answer)


def _part(part: Part) -> dict[str, Any]:
    if isinstance(part, Text):
        return {"text": part.text}
    return {"functionCall": {"name": part.name, "args": part.input}}


def _error(code: int, message: str, status: str) -> Response:
    body = {"error": {"code": code, "message": message, "status": status}}
    return JSONResponse(body, status_code=code)
