"""Calling tools the way the interaction tests assert on them: structured results only.

`call` returns a successful call's structured content, which the official SDK client has
already validated against the tool's output schema (it refuses a result that does not fit);
`fail` returns a failed call's error code and its one line of text. `Session` threads a state
handle through every call, as a 2026-07-28 client without a session must.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
from mcp import Client


class ToolFailed(AssertionError):
    def __init__(self, tool: str, code: str, text: str) -> None:
        super().__init__(f"{tool} failed: {text}")
        self.code = code
        self.text = text


def _text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def call(client: Client, tool: str, **args: object) -> dict[str, Any]:
    result = await client.call_tool(tool, dict(args))
    if result.is_error:
        data = result.structured_content or {}
        raise ToolFailed(tool, str(data.get("error")), _text(result))
    assert isinstance(result.structured_content, dict), f"{tool} returned no structured content"
    return result.structured_content


async def text_of(client: Client, tool: str, **args: object) -> str:
    """The one line (or, for listen, the wrapped batch) a text-only host would show."""
    result = await client.call_tool(tool, dict(args))
    assert not result.is_error, _text(result)
    return _text(result)


async def fail(client: Client, tool: str, **args: object) -> tuple[str, str]:
    result = await client.call_tool(tool, dict(args))
    assert result.is_error, f"{tool} should have failed"
    data = result.structured_content or {}
    return str(data.get("error")), _text(result)


class Session:
    """One identity on a session-less connection: the handle `join` returns rides on every
    later call."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.handle: str | None = None

    def _with(self, tool: str, args: dict[str, object]) -> dict[str, object]:
        if self.handle is not None and "handle" not in args:
            args = {**args, "handle": self.handle}
        return args

    async def call(self, tool: str, **args: object) -> dict[str, Any]:
        result = await call(self.client, tool, **self._with(tool, args))
        if tool == "join":
            self.handle = result.get("handle")
        return result

    async def fail(self, tool: str, **args: object) -> tuple[str, str]:
        return await fail(self.client, tool, **self._with(tool, args))


def reply_message(reply: httpx2.Response) -> dict[str, Any]:
    """The one JSON-RPC message in a raw `/mcp` reply, a JSON body or an SSE stream."""
    if reply.headers["content-type"].startswith("application/json"):
        body: dict[str, Any] = reply.json()
        return body
    data = [line[6:] for line in reply.text.splitlines() if line.startswith("data: ")]
    assert len(data) == 1, reply.text
    message: dict[str, Any] = json.loads(data[0])
    return message
