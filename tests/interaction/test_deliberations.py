"""Live deliberations through a real hub over HTTP: position requests as tasks, answers by
submit_position or by a task reply, rebuttal rounds, an absent panelist, the operator and a
peer as chair, the record on the ledger (checked by the independent verifier) and the
announcement; and the errors a caller can make."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from caucus.client import HubClient
from caucus.errors import Conflict, InvalidRequest, NotFound
from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from caucus.testing import FakeClock, FakeOpenAI, Say, last_user, make_hub, serve, serve_fake
from caucus.wire.deliberations import DeliberationInfo
from caucus.wire.messages import InboundMessage
from tests import record_format
from tests.conftest import ClientFactory, eventually


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def live_hub(tmp_path: Path, clock: FakeClock) -> AsyncIterator[Hub]:
    """The hub on a clock the test moves: a deadline passes when the test says, however fast
    the machine answers before it."""
    async with make_hub(tmp_path, clock=clock, send_rate_capacity=1000) as h:
        yield h


async def request_for(client: HubClient, deliberation: str, within: float = 15) -> InboundMessage:
    """The next position (or chair) request of `deliberation` in `client`'s inbox."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while loop.time() < end:
        for m in (await client.receive(timeout=2)).messages:
            if m.kind == "task" and m.thread == deliberation:
                return m
    raise AssertionError(f"no request of {deliberation} arrived")


async def settled(operator_or: Any, deliberation: str, within: float = 30) -> DeliberationInfo:
    found: list[DeliberationInfo] = []

    async def done() -> bool:
        d = await operator_or.deliberation(deliberation)
        found[:] = [d]
        return d.state in ("decided", "failed")

    await eventually(done, within=within, what=f"{deliberation} decided")
    return found[0]


async def test_a_split_panel_rebuts_an_absent_panelist_is_recorded_and_the_operator_decides(
    connect: ClientFactory, operator: OperatorClient, live_hub: Hub, clock: FakeClock
) -> None:
    lead = await connect("lead")
    ann, ben, dee = await connect("ann"), await connect("ben"), await connect("dee")
    started = await lead.convene(
        "Adopt PostgreSQL for the shared deployment?",
        ["ann", "ben", "dee"],
        evidence=[{"source": "benchmarks", "ref": "scaleout.txt", "ratio": 0.66}],
        rounds=2,
        deadline=6,
    )
    d = started.deliberation_id
    assert started.state == "deliberating"
    assert [p.name for p in started.panel] == ["ann", "ben", "dee"]

    # Round 1: ann approves with the tool, ben rejects by replying to the task, dee is silent.
    first = await request_for(ann, d)
    assert "round 1 of at most 2" in first.content
    assert "scaleout.txt" in first.content  # the evidence, fenced in the request
    await ann.submit_position(d, "approve", "it scales out", 0.8, ["scaleout.txt"])
    ben_request = await request_for(ben, d)
    assert ben_request.meta is not None
    await ben.reply_task(
        ben_request.meta["task_id"],
        'My answer: {"stance": "reject", "summary": "0.66x of SQLite", "confidence": 0.7}',
    )
    await request_for(dee, d)  # asked, and silent until the deadline passes
    clock.advance(6)

    # Round 2 shows each the others' positions; dee, absent, is not asked again.
    second = await request_for(ann, d, within=20)
    assert "round 2 of at most 2" in second.content
    assert "0.66x of SQLite" in second.content
    await ann.submit_position(d, "approve", "it scales out, and 0.66x is enough", 0.75)
    await request_for(ben, d)
    await ben.submit_position(d, "reject", "still 0.66x of SQLite", 0.7)

    # The operator chairs through a form.
    form_id: list[str] = []

    async def asked() -> bool:
        info = await lead.deliberation(d)
        if info.chair_form:
            form_id[:] = [info.chair_form]
        return bool(form_id)

    await eventually(asked, within=15, what="the chair's form")
    form = await operator.form(form_id[0])
    assert form.title.startswith(f"Chair {d}: Adopt PostgreSQL")
    await operator.answer_form(
        form_id[0],
        {"stance": "approve", "decision": "Adopt it behind a flag.", "confidence": "80%"},
    )
    done = await settled(lead, d)
    assert done.state == "decided", done.error
    assert done.verdict is not None
    assert (done.verdict.stance, done.verdict.confidence) == ("approve", 0.8)
    assert done.dissent == ["ben"]
    assert [p.name for p in done.panel if p.absent] == ["dee"]
    assert len(done.rounds) == 2

    records = [json.loads(line) for line in live_hub.decisions.path.read_text().splitlines()]
    record = next(r for r in records if r.get("caucus", {}).get("deliberation") == d)
    assert record["schema_version"] == "0.2"
    assert [p["agent"] for p in record["positions"]] == ["ann", "ben"]
    assert [p["agent"] for p in record["dissent"]] == ["ben"]
    assert [[p["agent"] for p in r] for r in record["rounds"]] == [["ann", "ben"], ["ann", "ben"]]
    assert record["absent"] == ["dee"]
    assert record["decision"] == "Adopt it behind a flag."
    assert record["evidence"] == [{"source": "benchmarks", "ref": "scaleout.txt", "ratio": 0.66}]
    assert done.record_hash == record["hash"]
    assert record_format.verify(live_hub.decisions.path)[1] is True

    # Announced to the room.
    heard = (await dee.receive(timeout=5)).messages
    news = [m for m in heard if m.kind == "system" and m.thread == d]
    assert len(news) == 1
    assert "Adopt it behind a flag." in news[0].content
    assert "Dissent: ben" in news[0].content
    assert "Absent: dee" in news[0].content


async def test_a_peer_chairs_and_a_unanimous_panel_needs_one_round(
    connect: ClientFactory, live_hub: Hub
) -> None:
    lead, ann, ben, judge = [await connect(n) for n in ("lead", "ann", "ben", "judge")]
    d = (await lead.convene("Cut v1.2 today?", ["ann", "ben"], chair="judge")).deliberation_id
    for panelist in (ann, ben):
        await request_for(panelist, d)
        await panelist.submit_position(d, "approve", "tests are green", 0.9)
    brief = await request_for(judge, d)
    assert "You chair deliberation" in brief.content
    assert "tests are green" in brief.content
    await judge.submit_position(d, "approve", "Cut it at 16:00.", 0.85)
    done = await settled(lead, d)
    assert done.state == "decided", done.error
    assert len(done.rounds) == 1
    assert done.verdict is not None
    assert done.verdict.decision == "Cut it at 16:00."
    record = json.loads(live_hub.decisions.path.read_text().splitlines()[-1])
    assert record["schema_version"] == "0.1"
    assert record["chair"] == "judge"


async def test_a_channel_convenes_its_members_and_the_decision_is_the_channels(
    connect: ClientFactory, live_hub: Hub
) -> None:
    lead, ann, ben, judge, outsider = [
        await connect(n) for n in ("lead", "ann", "ben", "judge", "out")
    ]
    for c in (lead, ann, ben):
        await c.join_channel("#release")
    started = await lead.convene("Ship?", "#release", chair="judge")
    d = started.deliberation_id
    assert [p.name for p in started.panel] == ["ann", "ben"]
    for panelist in (ann, ben):
        await request_for(panelist, d)
        await panelist.submit_position(d, "defer", "wait for the fix", 0.6)
    await request_for(judge, d)
    await judge.submit_position(d, "defer", "Wait a day.", 0.7)
    assert (await settled(lead, d)).state == "decided"
    heard = (await ann.receive(timeout=5)).messages
    assert [m.to for m in heard if m.kind == "system" and m.thread == d] == ["#release"]
    assert not [m for m in (await outsider.receive(timeout=0)).messages if m.thread == d]
    record = json.loads(live_hub.decisions.path.read_text().splitlines()[-1])
    assert record["caucus"]["audience"] == "#release"
    assert [d.subject for d in await outsider.decisions()] == []
    assert [d.subject for d in await ann.decisions()] == ["Ship?"]


async def test_bad_convenings_and_positions_get_clear_errors(connect: ClientFactory) -> None:
    lead, ann = await connect("lead"), await connect("ann")
    with pytest.raises(NotFound, match="ghost"):
        await lead.convene("S", ["ghost"])
    with pytest.raises(InvalidRequest, match="convener does not sit"):
        await lead.convene("S", ["lead"])
    with pytest.raises(InvalidRequest, match="no chair model"):
        await lead.convene("S", ["ann"], chair="model")
    with pytest.raises(InvalidRequest, match="neither the convener nor on the panel"):
        await lead.convene("S", ["ann"], chair="ann")
    with pytest.raises(InvalidRequest):
        await lead.convene("S", ["ann"], rounds=5)
    d = (await lead.convene("S", ["ann"], deadline=30)).deliberation_id
    with pytest.raises(InvalidRequest, match="stance must be one of approve, reject, defer"):
        await ann.submit_position(d, "maybe", "x", 0.5)
    with pytest.raises(InvalidRequest):
        await ann.submit_position(d, "approve", "x", 1.5)
    with pytest.raises(Conflict, match="not asking you"):
        await lead.submit_position(d, "approve", "x", 0.5)
    with pytest.raises(NotFound):
        await lead.deliberation("d_nope")


async def test_the_hubs_chair_model_decides_when_asked_to(tmp_path: Path) -> None:
    def chair(request: dict[str, Any]) -> list[Any]:
        assert last_user(request).startswith("You chair")
        assert "fine by me" in last_user(request)  # the final positions reach the chair
        return [Say('{"stance": "approve", "decision": "Merge it.", "confidence": 0.9}')]

    fake = FakeOpenAI(chair)
    async with (
        serve_fake(fake) as model_url,
        make_hub(tmp_path, chair_model="fake-model", chair_base_url=f"{model_url}/v1") as hub,
        serve(hub) as url,
        HubClient(url) as lead,
        HubClient(url) as ann,
    ):
        await lead.register("lead")
        await ann.register("ann")
        d = (await lead.convene("Merge #12?", ["ann"], chair="model")).deliberation_id
        await request_for(ann, d)
        await ann.submit_position(d, "approve", "fine by me", 0.8)
        done = await settled(lead, d)
    assert done.state == "decided", done.error
    assert done.verdict is not None
    assert (done.verdict.decision, done.chair) == ("Merge it.", "model")
    assert len(fake.requests) == 1
