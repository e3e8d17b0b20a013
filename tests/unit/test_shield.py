"""The shield's turns for strangers: how many are worked on at once, what does not hold a turn,
and that every turn taken is given back."""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from starlette.types import Message, Receive, Scope, Send

import caucus.web.shield as shield_module
from caucus.clock import SystemClock
from caucus.domain.buckets import TokenBuckets
from caucus.web.shield import STRANGER_TURN, Party, Shield, _Pace
from tests.waiting import eventually


class Inner:
    """An app that counts the requests inside it before their response starts."""

    def __init__(self) -> None:
        self.inside = 0
        self.most = 0
        self.release = asyncio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.inside += 1
        self.most = max(self.most, self.inside)
        try:
            if scope["path"] == "/upload":
                await receive()  # the body, which the client is slow to send
            elif scope["path"] == "/park":
                await self.release.wait()
            else:
                for _ in range(5):  # give way, so the others come in meanwhile
                    await asyncio.sleep(0)
        finally:
            self.inside -= 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def shield(inner: Inner, strangers: int = 2) -> Shield:
    def party(scope: Scope) -> Party:
        return Party(dict(scope["headers"]).get(b"x-party", b"stranger").decode())

    budget = TokenBuckets(SystemClock(), capacity=100, refill=10, what="refusals")
    return Shield(inner, budget=budget, party=party, strangers=strangers)


async def request(
    app: Shield, path: str = "/", party: str = "stranger", body: asyncio.Event | None = None
) -> int:
    async def receive() -> Message:
        if body is not None:
            await body.wait()
        return {"type": "http.request", "body": b"", "more_body": False}

    statuses: list[int] = []

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    scope = {
        "type": "http",
        "path": path,
        "headers": [(b"x-party", party.encode())],
        "client": ("127.0.0.1", 1),
    }
    await app(scope, receive, send)
    return statuses[0]


async def test_strangers_are_worked_on_a_few_at_a_time_and_known_parties_at_once() -> None:
    inner = Inner()
    app = shield(inner, strangers=2)
    assert await asyncio.gather(*(request(app) for _ in range(12))) == [200] * 12
    assert inner.most == 2
    sessions = [request(app, party="session") for _ in range(12)]
    assert await asyncio.gather(*sessions) == [200] * 12
    assert inner.most == 2  # an unjoined MCP session waits its turn too
    known = [request(app, party="known") for _ in range(12)]
    assert await asyncio.gather(*known) == [200] * 12
    assert inner.most == 12


async def test_a_slow_upload_does_not_hold_a_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shield_module, "STRANGER_TURN", 600.0)  # no turn ends on its own here
    inner = Inner()
    app = shield(inner, strangers=1)
    trickle = asyncio.Event()
    uploading = asyncio.create_task(request(app, "/upload", body=trickle))
    await eventually(lambda: inner.inside == 1, what="the upload to take the turn")
    # While the one turn's holder waits for its client, others are served.
    assert list(await asyncio.wait_for(asyncio.gather(request(app), request(app)), 5)) == [200, 200]
    trickle.set()
    assert await uploading == 200


async def test_a_parked_request_gives_its_turn_back_after_a_while() -> None:
    inner = Inner()
    app = shield(inner, strangers=1)
    parked = asyncio.create_task(request(app, "/park"))
    await eventually(lambda: inner.inside == 1, what="the long-poll to take the turn")
    # The long-poll keeps its request; the next stranger gets in once the turn is over.
    after = await asyncio.wait_for(request(app), 5 + STRANGER_TURN)
    assert (after, parked.done()) == (200, False)
    inner.release.set()
    assert await parked == 200


async def test_every_turn_is_given_back() -> None:
    inner = Inner()
    app = shield(inner, strangers=3)
    for _ in range(3):
        done = asyncio.Event()
        done.set()
        work = [request(app, "/upload", body=done) for _ in range(10)] + [
            request(app) for _ in range(10)
        ]
        assert await asyncio.gather(*work) == [200] * 20
    inner.most = 0
    assert await asyncio.gather(*(request(app) for _ in range(9))) == [200] * 9
    assert inner.most == 3  # all three turns still there, none leaked or doubled


async def test_strangers_are_let_in_at_their_rate_in_arrival_order() -> None:
    pace = _Pace(rate=50.0, burst=2.0)
    order: list[int] = []

    async def arrive(n: int) -> None:
        await pace.wait()
        order.append(n)

    started = time.monotonic()
    await asyncio.gather(*(arrive(n) for n in range(10)))
    assert order == list(range(10))  # nobody overtakes
    # Past the burst of 2, one each 1/50 s: a lower bound, which a slow machine only exceeds.
    assert time.monotonic() - started >= (10 - 2) / 50 * 0.9


async def test_an_unlimited_pace_never_waits() -> None:
    pace = _Pace(rate=math.inf, burst=1.0)
    await asyncio.wait_for(asyncio.gather(*(pace.wait() for _ in range(1000))), 5)
    assert pace.next_free == 0.0
