"""The contract for task dependencies and ready work (issue 34), run against each backend: a
task that waits is stored blocked, its item held from its worker and its time to live not
running, until everything it waits on completes; a failure cancels it (and what waits on
it) or lets it proceed, as its poster chose; a cycle is refused; `ready` lists a worker's
startable tasks by priority, then age."""

from __future__ import annotations

import pytest

from caucus.domain.messages import ClaimRequest
from caucus.domain.peers import Peer
from caucus.domain.tasks import Task, TaskState
from caucus.errors import Conflict, InvalidRequest, NotFound
from caucus.services.delivery_units import Claim
from caucus.services.hub import Hub
from tests.contract.conftest import NOW, RoomFactory


async def join(room: Hub, name: str) -> Peer:
    return (await room.principals.register(name=name)).peer


async def items(room: Hub, p: Peer) -> list[tuple[str, str | None]]:
    """The items `p` receives now: (kind, task id)."""
    now = room.clock.now()
    result = await room._db.write(Claim(ClaimRequest(p.id, now, visibility=60, limit=100)))
    return [(d.message.kind, (d.message.meta or {}).get("task_id")) for d in result.deliveries]


async def state(room: Hub, task: Task) -> tuple[TaskState, bool]:
    found = await room._db.read(lambda r: r.tasks.get(task.id))
    assert found is not None
    return found.state, found.blocked


def advance(room: Hub, seconds: float) -> None:
    room.clock.advance(seconds)  # type: ignore[attr-defined]


async def test_a_waiting_task_reaches_its_worker_when_all_it_waits_on_complete(
    rooms: RoomFactory,
) -> None:
    room = await rooms(task_ttl=600, task_visibility_timeout=100_000)
    lead, alice, bob = [await join(room, n) for n in ("lead", "alice", "bob")]
    schema = await room.tasks.send(lead, to="alice", payload="design the schema")
    api = await room.tasks.send(lead, to="alice", payload="draft the API")
    build = await room.tasks.send(
        lead, to="bob", payload="build it", blocked_by=[schema.id, api.id, schema.id]
    )
    assert (build.blocked, build.blocked_by, build.state) == (True, [schema.id, api.id], "pending")
    assert await items(room, bob) == []  # held back
    assert await room.tasks.ready(bob) == []
    with pytest.raises(Conflict):  # not bob's to work yet
        await room.tasks.reply(bob, build.id, "done already")
    assert await items(room, alice) == [("task", schema.id), ("task", api.id)]  # working
    advance(room, 3600)  # past the time to live: a blocked task does not expire
    await room.tasks.sweep()
    assert await state(room, build) == (TaskState.PENDING, True)
    await room.tasks.reply(alice, schema.id, "schema.sql")
    assert await state(room, build) == (TaskState.PENDING, True)  # the API is not done
    await room.tasks.reply(alice, api.id, "api.md")
    assert await state(room, build) == (TaskState.PENDING, False)
    (ready,) = await room.tasks.ready(bob)
    assert ready.id == build.id
    assert ready.expires_at == room.clock.now() + 600  # its time to live starts now
    assert await items(room, bob) == [("task", build.id)]
    shown = await room.tasks.status(lead, build.id)
    assert shown.blocked_by == [schema.id, api.id]
    assert [e.detail for e in shown.history] == ["sent", "blocked", "ready", "received"]


async def test_a_failure_cancels_what_waits_on_it_down_the_graph_or_lets_it_proceed(
    room: Hub,
) -> None:
    lead, alice, bob = [await join(room, n) for n in ("lead", "alice", "bob")]
    first = await room.tasks.send(lead, to="alice", payload="migrate")
    then = await room.tasks.send(lead, to="bob", payload="verify", blocked_by=[first.id])
    last = await room.tasks.send(lead, to="bob", payload="announce", blocked_by=[then.id])
    anyway = await room.tasks.send(
        lead, to="bob", payload="clean up", blocked_by=[first.id], on_failure="proceed"
    )
    await items(room, lead)
    await room.tasks.fail(alice, first.id, "the disk is full")
    assert await state(room, then) == (TaskState.CANCELED, True)
    assert await state(room, last) == (TaskState.CANCELED, True)
    assert await state(room, anyway) == (TaskState.PENDING, False)
    told = await items(room, lead)
    assert ("failure", then.id) in told
    assert ("failure", last.id) in told
    assert await items(room, bob) == [("task", anyway.id)]  # no word of the canceled ones
    status = await room.tasks.status(lead, then.id)
    assert status.error == f"canceled: task {first.id} it waited on is failed"


async def test_a_cycle_is_refused_and_only_a_waiting_task_may_wait_on_more(room: Hub) -> None:
    lead = await join(room, "lead")
    await join(room, "alice")
    base = await room.tasks.send(lead, to="alice", payload="base")
    a = await room.tasks.send(lead, to="alice", payload="a", blocked_by=[base.id])
    b = await room.tasks.send(lead, to="alice", payload="b", blocked_by=[a.id])
    with pytest.raises(Conflict) as refused:
        await room.tasks.depend(lead, a.id, [b.id])
    assert refused.value.extra["cycle"] == [a.id, b.id, a.id]
    with pytest.raises(Conflict):
        await room.tasks.depend(lead, a.id, [a.id])
    other = await room.tasks.send(lead, to="alice", payload="other")
    assert (await room.tasks.depend(lead, b.id, [other.id])).blocked_by == [a.id, other.id]
    with pytest.raises(Conflict):  # it went to its worker already
        await room.tasks.depend(lead, other.id, [base.id])


async def test_what_a_task_may_wait_on_is_checked(room: Hub) -> None:
    lead, alice, _ = [await join(room, n) for n in ("lead", "alice", "eve")]
    theirs = await room.tasks.send(alice, to="eve", payload="private")
    with pytest.raises(NotFound):
        await room.tasks.send(lead, to="alice", payload="x", blocked_by=[theirs.id])
    with pytest.raises(NotFound):
        await room.tasks.send(lead, to="alice", payload="x", blocked_by=["t_nope"])
    failed = await room.tasks.send(lead, to="alice", payload="doomed")
    await room.tasks.fail(alice, failed.id, "no")
    with pytest.raises(Conflict):
        await room.tasks.send(lead, to="alice", payload="x", blocked_by=[failed.id])
    proceeds = await room.tasks.send(
        lead, to="alice", payload="x", blocked_by=[failed.id], on_failure="proceed"
    )
    assert (proceeds.blocked, proceeds.blocked_by) == (False, [failed.id])
    for bad in ({"priority": 5}, {"on_failure": "shrug"}, {"blocked_by": ["t"] * 21}):
        with pytest.raises(InvalidRequest):
            await room.tasks.send(lead, to="alice", payload="x", **bad)  # type: ignore[arg-type]


async def test_ready_work_is_most_urgent_first_then_oldest_and_a_blocked_one_can_be_canceled(
    room: Hub,
) -> None:
    lead, alice = await join(room, "lead"), await join(room, "alice")
    low = await room.tasks.send(lead, to="alice", payload="tidy", priority=4)
    advance(room, 1)
    urgent = await room.tasks.send(lead, to="alice", payload="outage", priority=0)
    advance(room, 1)
    normal_old = await room.tasks.send(lead, to="alice", payload="review")
    advance(room, 1)
    normal_new = await room.tasks.send(lead, to="alice", payload="review more")
    blocked = await room.tasks.send(lead, to="alice", payload="later", blocked_by=[low.id])
    ready = [t.id for t in await room.tasks.ready(alice)]
    assert ready == [urgent.id, normal_old.id, normal_new.id, low.id]
    await room.tasks.cancel(lead, blocked.id)
    assert await state(room, blocked) == (TaskState.CANCELED, True)
    await room.tasks.reply(alice, low.id, "tidied")  # nothing left to release
    assert blocked.id not in [t.id for t in await room.tasks.ready(alice)]


async def test_an_expired_dependency_cancels_what_waits_on_it(rooms: RoomFactory) -> None:
    room = await rooms(task_ttl=60)
    lead = await join(room, "lead")
    await join(room, "alice")
    slow = await room.tasks.send(lead, to="alice", payload="slow")
    waits = await room.tasks.send(lead, to="alice", payload="after", blocked_by=[slow.id])
    advance(room, 120)
    await room.tasks.sweep()
    assert await state(room, slow) == (TaskState.EXPIRED, False)
    assert await state(room, waits) == (TaskState.CANCELED, True)
    assert room.clock.now() > NOW


async def test_an_offer_waits_on_tasks_before_it_is_announced_and_open_to_claims(
    room: Hub,
) -> None:
    lead, alice, bob = [await join(room, n) for n in ("lead", "alice", "bob")]
    design = await room.tasks.send(lead, to="alice", payload="design")
    risky = await room.tasks.send(lead, to="alice", payload="risky spike")
    offer = await room.offers.post(
        lead, "implement the design", blocked_by=[design.id], ttl_seconds=600, priority=1
    )
    doomed = await room.offers.post(lead, "polish the spike", blocked_by=[risky.id])
    assert (offer.blocked, offer.blocked_by, offer.priority) == (True, [design.id], 1)
    assert ("announce", None) not in await items(room, bob)  # not announced yet
    with pytest.raises(Conflict):
        await room.offers.claim(bob, offer.id)
    advance(room, 3600)  # past its time to live: a blocked offer does not expire
    await room.offers.sweep()
    await room.tasks.reply(alice, design.id, "design.md")
    opened = await room._db.read(lambda r: r.offers.get(offer.id))
    assert opened is not None
    assert (opened.state, opened.blocked) == ("open", False)
    assert opened.expires_at == room.clock.now() + 600
    assert [k for k, _ in await items(room, bob)] == ["announce"]
    await room.offers.claim(bob, offer.id)
    await room.tasks.fail(alice, risky.id, "dead end")
    withdrawn = await room._db.read(lambda r: r.offers.get(doomed.id))
    assert withdrawn is not None
    assert withdrawn.state == "withdrawn"
    assert ("offer_withdrawn", None) in await items(room, lead)


async def test_an_offer_waiting_on_a_task_canceled_down_the_graph_is_withdrawn(
    room: Hub,
) -> None:
    lead = await join(room, "lead")
    alice = await join(room, "alice")
    first = await room.tasks.send(lead, to="alice", payload="first")
    then = await room.tasks.send(lead, to="alice", payload="then", blocked_by=[first.id])
    offer = await room.offers.post(lead, "after both", blocked_by=[then.id])
    await room.tasks.fail(alice, first.id, "no")
    assert await state(room, then) == (TaskState.CANCELED, True)
    found = await room._db.read(lambda r: r.offers.get(offer.id))
    assert found is not None
    assert found.state == "withdrawn"
