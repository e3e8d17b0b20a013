"""Pure ASGI middleware (no BaseHTTPMiddleware: it would tax every request)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from caucus.api.errors import body_too_large, caucus_error_response


class BodyLimit:
    """Refuse request bodies over `max_bytes` with 413, by Content-Length or while streaming."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_bytes:
                    await caucus_error_response(body_too_large(self.max_bytes))(
                        scope, receive, send
                    )
                    return
                break
        seen = 0
        limit = self.max_bytes

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise body_too_large(limit)
            return message

        await self.app(scope, limited, send)
