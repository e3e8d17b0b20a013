"""Strangers served in turn, and refusals made cheap for the client that earns them.

A flood is requests from parties the hub does not know: registrations, MCP initializes, unknown
tokens, foreign origins. Each costs a parse, a route and often a database write or an MCP
session set-up, and if the one event loop runs dozens of them at once every agent it knows
waits behind them. So:

- A request the hub can tell is a known party's without any work (a bearer token of a peer it
  has seen, the operator's or the observer's, a joined MCP session's id) goes straight in.
- Everyone else is a stranger, and strangers are served `stranger_concurrency` at a time, in
  arrival order. A stranger's turn lasts until its response starts, never longer than
  `STRANGER_TURN` (a long-poll parks without holding it), and waiting for the client's own
  body does not count, so a slow uploader cannot hold the door either. A flood of strangers
  then queues behind itself instead of in front of the agents, and a real newcomer on the
  same address waits a few turns, not the flood.
- The shield counts the refusals each address earns: the answers that say the request itself
  was wrong or not allowed (400, 401, 403, 404, 405, 408, 413, 415, 429, 431; not 409 or 422,
  which a well-meaning client meets in normal work). Once an address has spent
  its budget (`shield_capacity`, refilled at `shield_refill` per second), its stranger requests
  are answered 429 at the door, before anything else runs, and only after a pause as long as
  the budget takes to refill by one (at most `REFUSAL_HOLD`): a client that retries at once
  then floods at the refill rate, not at the speed of its loop. An unjoined MCP session's
  requests skip this budget (a real client behind a flooding address, everything on one laptop
  is 127.0.0.1, keeps its session) but still wait their turn.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from caucus.domain.buckets import TokenBuckets
from caucus.web.admission import Party
from caucus.web.errors import body_too_large, error_body

__all__ = ["REFUSALS", "REFUSAL_HOLD", "STRANGER_TURN", "Party", "Shield"]

REFUSALS = frozenset({400, 401, 403, 404, 405, 408, 413, 415, 429, 431})
STRANGER_TURN = 0.25  # seconds one stranger's request may hold its place in the turn
REFUSAL_HOLD = 0.25  # seconds a refusal at the door is held at most
CLOSE_PAST = 16  # a body declared this many times the limit is refused unread, and closed


class Shield:
    def __init__(
        self,
        app: ASGIApp,
        *,
        budget: TokenBuckets,
        party: Callable[[Scope], Party],
        strangers: int,
        stranger_rate: float = math.inf,
        stranger_burst: float = 100.0,
        max_body_bytes: int | None = None,
    ) -> None:
        self.app = app
        self.budget = budget
        self.party = party
        self._strangers = strangers
        self._pace = _Pace(stranger_rate, stranger_burst)
        self._max_body = max_body_bytes
        self._turns: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    def _turns_here(self) -> asyncio.Semaphore:
        # A semaphore belongs to one event loop; an app served again on another (a test
        # restarting its server) gets fresh turns.
        loop = asyncio.get_running_loop()
        if self._turns is None or self._turns[0] is not loop:
            self._turns = (loop, asyncio.Semaphore(self._strangers))
        return self._turns[1]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared(scope)
        if self._max_body is not None and declared > self._max_body:
            # Answered before the body is read or the request waits for a turn: uvicorn then
            # drops the body as it arrives. Megabytes past the limit are not even received:
            # the connection closes (a client that reads before it finishes sending, or sent
            # `Expect: 100-continue`, still sees the 413), since draining them is the cost a
            # flood of them is after.
            close = declared > CLOSE_PAST * self._max_body
            await _too_large(send, self._max_body, close=close)
            return
        party = self.party(scope)
        if party is Party.KNOWN:
            await self.app(scope, receive, send)
            return
        if party is Party.SESSION:
            await self._pace.wait()
            await _InTurn(self._turns_here(), self.app).serve(scope, receive, send)
            return
        client = scope.get("client")
        source = client[0] if client else ""
        wait = self.budget.wait(source)
        if wait > 0:
            await asyncio.sleep(min(wait, REFUSAL_HOLD))
            wait = self.budget.wait(source)
            if wait > 0:
                await _refuse(send, wait)
                return

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] in REFUSALS:
                self.budget.spend(source)
            await send(message)

        await self._pace.wait()
        await _InTurn(self._turns_here(), self.app).serve(scope, receive, counting)


class _Pace:
    """Strangers let in at most `rate` per second beyond a burst of `burst`, in arrival order:
    each arrival reserves the next free moment (a virtual schedule), so waiting costs a timer,
    not a retry, and nobody overtakes."""

    def __init__(self, rate: float, burst: float) -> None:
        self.interval = 0.0 if math.isinf(rate) else 1.0 / rate
        self.window = burst * self.interval
        self.next_free = 0.0

    async def wait(self) -> None:
        if not self.interval:
            return
        now = time.monotonic()
        self.next_free = max(self.next_free, now) + self.interval
        delay = self.next_free - self.window - now
        if delay > 0:
            await asyncio.sleep(delay)


class _InTurn:
    """One stranger's request, holding a turn while the hub works on it (see the module)."""

    def __init__(self, turns: asyncio.Semaphore, app: ASGIApp) -> None:
        self.turns = turns
        self.app = app
        self.holds = 0  # a count, not a flag: two readers of the body may each take one
        self.started = False
        self.timer: asyncio.TimerHandle | None = None

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def reading() -> Message:
            if self.started:
                return await receive()
            self._release()
            try:
                return await receive()
            finally:
                if not self.started:
                    await self._acquire()

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.started = True
                self._release()
            await send(message)

        await self._acquire()
        try:
            await self.app(scope, reading, sending)
        finally:
            self.started = True
            self._release()

    async def _acquire(self) -> None:
        await self.turns.acquire()
        self.holds += 1
        if self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(STRANGER_TURN, self._expire)

    def _expire(self) -> None:
        self.timer = None
        self.started = True  # parked (a long-poll, a slow write): it goes on outside the turn
        self._release()

    def _release(self) -> None:
        while self.holds:
            self.holds -= 1
            self.turns.release()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def _declared(scope: Scope) -> int:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else 0
    return 0


async def _too_large(send: Send, limit: int, *, close: bool) -> None:
    refusal = body_too_large(limit)
    body = json.dumps(error_body(refusal)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": refusal.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *([(b"connection", b"close")] if close else []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


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
