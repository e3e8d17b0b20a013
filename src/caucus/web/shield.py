"""Refusals made cheap for the client that earns them.

A flood is mostly requests the hub refuses (429 for registrations past the budget, 401 for
unknown tokens, 403 for foreign origins), and each still costs a parse, a route and often a
database read: enough of them keep the one event loop busy and every legit agent waits. The
shield counts the refusals each client address earns; once an address has spent its budget of
them (`shield_capacity`, refilled at `shield_refill` per second), its requests are answered 429
at the door, before anything else runs, until the budget refills. A request the hub can tell
is a known party's without any work (a bearer token of a peer it has seen, the operator's or
the observer's, an open MCP session's id) is never stopped here, so agents and the console
behind the same address as a flooder (everything on one laptop is 127.0.0.1) keep working.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from caucus.services.ratelimit import TokenBuckets

REFUSALS = frozenset({401, 403, 429})


class Shield:
    def __init__(
        self, app: ASGIApp, *, budget: TokenBuckets, known: Callable[[Scope], bool]
    ) -> None:
        self.app = app
        self.budget = budget
        self.known = known

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.known(scope):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        source = client[0] if client else ""
        wait = self.budget.wait(source)
        if wait > 0:
            await _refuse(send, wait)
            return

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] in REFUSALS:
                self.budget.spend(source)
            await send(message)

        await self.app(scope, receive, counting)


async def _refuse(send: Send, wait: float) -> None:
    body = json.dumps(
        {
            "error": "rate_limited",
            "detail": "this address has been refused too often; wait, then retry with "
            "credentials the hub knows",
            "next": "retry_later",
            "retry_after": round(wait, 3),
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(max(1, math.ceil(wait))).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
