"""Every documented answer, produced and checked (issue 49): for each route in /openapi.json
the walker asks for its success and each answer the route documents as its own
(`tests/answer_cases.py`), and for every route at once the answers any route gives for the
same reason (no token, a foreign Origin, a Host the hub does not answer to). Each answer's
body is checked strictly against the shape documented for that status (`tests/answers.py`).

It fails when a route is documented but never walked, when a status a route documents is
never produced, when an answer has a status its route does not document, and when a field is
produced but not documented or documented but not produced. docs/api.md must name every
route the document has, and the document every route docs/api.md names."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from tests.answer_cases import CASES, Case
from tests.answer_world import OBSERVER_TOKEN, PROFILES, World
from tests.answers import Shapes

API_MD = Path(__file__).resolve().parents[2] / "docs" / "api.md"
# Answered for the same reason by every route of a kind, documented once in docs/api.md's
# table of errors, and produced elsewhere: malformed input by tests/interaction/
# test_route_walker.py (400, 413, 415, 422), budgets and caps by test_floods.py and
# test_holding_the_room.py (429), the storage by tests/contract (503, 507).
ELSEWHERE = {400, 413, 415, 422, 429, 503, 507}
STREAMS = {"GET /operator/events"}  # answers as a stream: its status and type are checked


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with (
        make_hub(
            tmp_path / "hub",
            receive_timeout_max=0.2,
            send_rate_capacity=100_000,
            send_rate_refill=100_000,
            announce_interval=0,
            search_rate_capacity=1e9,
            a2a_wait_max=0.2,
            observer_token=OBSERVER_TOKEN,
            spawn_profiles=PROFILES,
        ) as hub,
        serve(hub) as url,
        httpx2.AsyncClient(base_url=url, timeout=30) as http,
    ):
        room = World(http, hub)
        await room.open()
        yield room


def _fill(template: str, values: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], template)


class Walk:
    def __init__(self, shapes: Shapes) -> None:
        self.shapes = shapes
        self.produced: dict[str, set[int]] = defaultdict(set)
        self.failures: list[str] = []

    def check(self, op: str, response: httpx2.Response, wanted: int | None) -> None:
        status = response.status_code
        self.produced[op].add(status)
        where = f"{op} -> {status}"
        if wanted is not None and status != wanted:
            self.failures.append(f"{where}, wanted {wanted}: {response.text[:200]}")
            return
        if str(status) not in self.shapes.operations()[op]["responses"]:
            self.failures.append(f"{where}: a status the route does not document")
            return
        if status == 204:
            if response.content:
                self.failures.append(f"{where}: a body on a 204")
            return
        if response.headers.get("content-type", "").startswith("application/json"):
            body: Any = response.json()
            self.failures += [f"{where}: {p}" for p in self.shapes.problems(op, status, body)]

    async def case(self, world: World, case: Case) -> None:
        made = await case.prep(world) if case.prep is not None else {}
        path = _fill(case.op.split(" ", 1)[1], {**case.path, **made.get("path", {})})
        method = case.op.split(" ", 1)[0]
        body = made.get("body", case.body)
        params = made.get("params", case.params)
        if case.op in STREAMS:
            headers = world.headers(case.role)
            async with world.http.stream(method, path, headers=headers) as response:
                self.produced[case.op].add(response.status_code)
                assert response.headers["content-type"].startswith("text/event-stream")
            return
        response = await world.call(case.role, method, path, body=body, params=params)
        self.check(case.op, response, case.status)


async def _everywhere(world: World, walk: Walk) -> None:
    """What any route answers for the same reason: no token, a foreign Origin or Host."""
    for op, operation in walk.shapes.operations().items():
        method, template = op.split(" ", 1)
        path = _fill(template, defaultdict(lambda: "x"))
        access = operation.get("x-caucus-access", "public")
        if access not in ("public", "room"):
            walk.check(op, await world.call("none", method, path), 401)
            if "requestBody" in operation:  # who you are comes before what you sent
                wrong = await world.call("none", method, path, body={"unknown": [1]})
                walk.check(op, wrong, 401)
        elif access == "room":  # readable without a token, but a bad one is refused
            unknown = {"Authorization": "Bearer cau_unknown0123456789"}
            walk.check(op, await world.call("none", method, path, headers=unknown), 401)
        foreign = {"Origin": "https://elsewhere.example"}
        walk.check(op, await world.call("operator", method, path, headers=foreign), 403)
        misdirected = {"Host": "elsewhere.example"}
        walk.check(op, await world.call("operator", method, path, headers=misdirected), 421)


async def test_every_documented_answer_is_produced_in_its_documented_shape(
    world: World,
) -> None:
    walk = Walk(Shapes((await world.http.get("/openapi.json")).json()))
    operations = walk.shapes.operations()
    unwalked = sorted(set(operations) - {c.op for c in CASES} - STREAMS)
    assert unwalked == [], "routes without a case in tests/answer_cases.py"
    await _everywhere(world, walk)
    for case in CASES:
        await walk.case(world, case)
    never = {
        op: sorted(
            int(s) for s in operation["responses"] if int(s) not in walk.produced[op] | ELSEWHERE
        )
        for op, operation in operations.items()
    }
    never = {op: statuses for op, statuses in never.items() if statuses}
    assert walk.failures == [], "\n".join(walk.failures)
    assert never == {}, "documented but never produced:\n" + "\n".join(
        f"{op}: {statuses}" for op, statuses in sorted(never.items())
    )


def test_docs_and_the_document_name_the_same_routes(hub: Hub) -> None:
    from caucus.server import build_app

    spec = build_app(hub).openapi()
    documented = {f"{m.upper()} {p}" for p, ops in spec["paths"].items() for m in ops}
    named = set(re.findall(r"`((?:GET|POST|PUT|DELETE|PATCH) /[^`?\s]*)", API_MD.read_text()))
    assert sorted(documented - named) == [], "routes docs/api.md does not name"
    assert sorted(named - documented) == [], "routes docs/api.md names that the hub lacks"
