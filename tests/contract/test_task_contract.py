"""The contract for tasks, run against each backend: the repository (a task stored with its
item, claimed by the receive that hands the item out, moved only from the state it was read
in, listed, swept) and the rules above it, which the task service applies in one unit of work
per move (the acting party, the states a move is allowed from, the item it sends, one winner
when two parties race)."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from caucus.domain.messages import ClaimRequest, NewMessage
from caucus.domain.peers import Peer
from caucus.domain.tasks import Task, TaskState
from caucus.errors import Conflict, Forbidden, NotFound
from caucus.services.delivery_units import Claim
from caucus.services.hub import Hub
from caucus.services.task_units import open_task
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos
from tests.contract.conftest import NOW
from tests.contract.test_store_contract import peer

_ids = itertools.count(1)


async def new_task(db: Engine, sender: Peer, to: str, *, ttl: float = 3600) -> Task:
    task_id = f"t_{next(_ids)}"
    item = NewMessage(
        id=f"m_t{next(_ids)}",
        ts=NOW,
        sender_id=sender.id,
        sender=sender.name,
        to=to,
        kind="task",
        content="please review",
        meta={"task_id": task_id},
    )
    task, outcome = await db.write(
        lambda r: open_task(
            r,
            task_id=task_id,
            sender_id=sender.id,
            sender=sender.name,
            to=to,
            subject="review",
            payload="please review",
            thread=task_id,
            now=NOW,
            expires_at=NOW + ttl,
            message=item,
        )
    )
    assert [r.name for r in outcome.recipients] == [to]
    return task


async def receive(db: Engine, p: Peer, now: float = NOW) -> list[str]:
    result = await db.write(Claim(ClaimRequest(p.id, now, visibility=60, limit=100)))
    return [d.message.kind for d in result.deliveries]


async def get(db: Engine, task_id: str) -> Task:
    found = await db.read(lambda r: r.tasks.get(task_id))
    assert found is not None
    return found


async def move(db: Engine, task_id: str, to: TaskState) -> bool:
    return await db.write(lambda r: r.tasks.move(task_id, TaskState.PENDING, to, NOW))


# --- the repository --------------------------------------------------------------------------
async def test_a_task_is_stored_pending_and_its_item_claims_it_when_received(db: Engine) -> None:
    alice, bob = await peer(db, "alice"), await peer(db, "bob")
    task = await new_task(db, alice, "bob")
    assert (task.state, task.sender, task.worker) == (TaskState.PENDING, "alice", "bob")
    stored = await db.read(lambda r: r.tasks.stored(task.id))
    assert stored is not None
    assert (stored.sender_id, stored.worker_id) == (alice.id, bob.id)
    got = await db.write(Claim(ClaimRequest(bob.id, NOW, visibility=60, limit=100)))
    assert [d.message.kind for d in got.deliveries] == ["task"]
    assert got.claimed_for == [alice.id]  # the sender, woken with the commit
    claimed = await get(db, task.id)
    assert claimed.state is TaskState.IN_PROGRESS
    assert [e.state for e in claimed.history] == ["pending", "in_progress"]
    assert [e.detail for e in claimed.history] == ["sent", "received"]


async def test_a_task_for_nobody_is_not_created(db: Engine) -> None:
    alice = await peer(db, "alice")
    with pytest.raises(NotFound):
        await new_task(db, alice, "ghost")
    assert await db.read(lambda r: r.tasks.all(None)) == []


async def test_a_move_applies_only_from_the_state_it_was_read_in(db: Engine) -> None:
    alice = await peer(db, "alice")
    await peer(db, "bob")
    task = await new_task(db, alice, "bob")
    wrong = TaskState.INPUT_REQUIRED
    assert not await db.write(lambda r: r.tasks.move(task.id, wrong, TaskState.PENDING, NOW))
    assert await db.write(
        lambda r: r.tasks.move(task.id, TaskState.PENDING, TaskState.COMPLETED, NOW, result="ok")
    )
    done = await get(db, task.id)
    assert (done.state, done.result) == (TaskState.COMPLETED, "ok")


async def moved(db: Engine, task: Task, to: TaskState, fields: dict[str, str]) -> Task:
    """Move `task` to `to` with `fields`; the task the unit says it stored."""

    def unit(r: Repos) -> Task:
        assert r.tasks.move(task.id, task.state, to, NOW + 1, **fields)
        return r.tasks.with_history(r.tasks.as_moved(task, to, NOW + 1, fields))

    return await db.write(unit)


async def test_a_task_as_inserted_and_as_moved_is_the_task_as_stored(db: Engine) -> None:
    """The units build what they stored rather than read it back (`Tasks.insert`,
    `Tasks.as_moved`): each must be what a read then finds."""
    alice = await peer(db, "alice")
    await peer(db, "bob")
    task = await new_task(db, alice, "bob")
    assert await get(db, task.id) == task
    was = task
    for to, fields in [
        (TaskState.INPUT_REQUIRED, {"question": "which?"}),
        (TaskState.PENDING, {"answer": "that one"}),
        (TaskState.COMPLETED, {"result": "done"}),
    ]:
        expected = await moved(db, was, to, fields)
        assert await get(db, task.id) == expected
        was = expected
    assert (was.question, was.answer, was.result) == ("which?", "that one", "done")


async def test_two_moves_racing_from_one_state_one_wins(db: Engine) -> None:
    alice = await peer(db, "alice")
    await peer(db, "bob")
    for _ in range(5):
        task = await new_task(db, alice, "bob")
        moved = await asyncio.gather(
            *(move(db, task.id, to) for to in (TaskState.COMPLETED, TaskState.CANCELED))
        )
        assert sorted(moved) == [False, True]


async def test_lists_by_party_and_state(db: Engine) -> None:
    alice, bob = await peer(db, "alice"), await peer(db, "bob")
    first = await new_task(db, alice, "bob")
    second = await new_task(db, bob, "alice")
    await db.write(lambda r: r.tasks.move(first.id, TaskState.PENDING, TaskState.FAILED, NOW))

    async def ids(p: Peer, role: str, state: TaskState | None) -> list[str]:
        return [t.id for t in await db.read(lambda r: r.tasks.of_party(p.id, role, state))]

    assert await ids(alice, "sent", None) == [first.id]
    assert await ids(alice, "received", None) == [second.id]
    assert await ids(bob, "received", TaskState.FAILED) == [first.id]
    assert await ids(bob, "received", TaskState.PENDING) == []
    every = await db.read(lambda r: r.tasks.all(None))
    assert {t.id for t in every} == {first.id, second.id}
    pending = await db.read(lambda r: r.tasks.all(TaskState.PENDING))
    assert [t.id for t in pending] == [second.id]


async def test_silent_claims_and_stale_tasks_are_found_for_the_sweep(db: Engine) -> None:
    alice, bob = await peer(db, "alice"), await peer(db, "bob")
    silent = await new_task(db, alice, "bob")
    await receive(db, bob)  # in progress since NOW
    stale = await new_task(db, alice, "bob", ttl=10)
    found = await db.read(lambda r: r.tasks.silent(NOW + 50))
    assert [(s.task.id, s.worker_id) for s in found] == [(silent.id, bob.id)]
    assert [t.id for t in await db.read(lambda r: r.tasks.stale(NOW + 100))] == [stale.id]
    assert await db.write(lambda r: r.tasks.requeue(silent.id, NOW + 100))
    assert not await db.write(lambda r: r.tasks.requeue(silent.id, NOW + 101))  # once
    assert (await get(db, silent.id)).state is TaskState.PENDING


# --- the rules above it, over each backend -------------------------------------------------
async def join(room: Hub, name: str) -> Peer:
    return (await room.principals.register(name=name)).peer


async def test_a_move_checks_the_party_and_the_state_and_sends_its_item(room: Hub) -> None:
    alice, bob, carol = [await join(room, n) for n in ("alice", "bob", "carol")]
    task = await room.tasks.send(alice, to="bob", payload="review this")
    with pytest.raises(NotFound):  # no party to it: it is not carol's to see
        await room.tasks.fail(carol, task.id, "no")
    with pytest.raises(Forbidden):  # the sender cannot fail the worker's task
        await room.tasks.fail(alice, task.id, "no")
    done = await room.tasks.reply(bob, task.id, "lgtm")
    assert (done.state, done.result) == (TaskState.COMPLETED, "lgtm")
    with pytest.raises(Conflict):  # completed is not open: nothing moves
        await room.tasks.cancel(alice, task.id)
    after = await room.tasks.status(alice, task.id)
    assert after.state is TaskState.COMPLETED
    assert [e.state for e in after.history] == ["pending", "completed"]
    got = await room.delivery.receive(alice, wait=0)
    assert [d.message.kind for d in got.deliveries] == ["result"]


async def test_a_question_parks_the_task_and_the_answer_sends_it_back(room: Hub) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    task = await room.tasks.send(alice, to="bob", payload="which branch?")
    parked = await room.tasks.request_input(bob, task.id, "main or dev?")
    assert parked.state is TaskState.INPUT_REQUIRED
    with pytest.raises(Conflict):
        await room.tasks.reply(bob, task.id, "done")  # parked: the worker waits
    answered = await room.tasks.reply(alice, task.id, "dev")
    assert (answered.state, answered.answer) == (TaskState.PENDING, "dev")
    kinds = [d.message.kind for d in (await room.delivery.receive(bob, wait=0)).deliveries]
    assert kinds == ["task", "task"]  # the first item, then the one with the answer


async def test_two_parties_racing_for_one_task_one_wins(room: Hub) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    for _ in range(5):
        task = await room.tasks.send(alice, to="bob", payload="race")
        outcomes = await asyncio.gather(
            room.tasks.reply(bob, task.id, "done"),
            room.tasks.cancel(alice, task.id),
            return_exceptions=True,
        )
        won = [o for o in outcomes if isinstance(o, Task)]
        lost = [o for o in outcomes if isinstance(o, BaseException)]
        assert len(won) == 1
        assert len(lost) == 1
        assert isinstance(lost[0], Conflict)
        final = await room.tasks.status(alice, task.id)
        assert final.state is won[0].state


async def test_the_sweep_requeues_a_silent_claim_and_expires_the_stale(room: Hub) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    silent = await room.tasks.send(alice, to="bob", payload="slow")
    got = await room.delivery.receive(bob, wait=0)  # bob takes it: in progress
    await room.delivery.ack(bob, through=got.deliveries[-1].message.seq)
    clock = room.clock
    clock.advance(room.settings.task_visibility_timeout + 1)  # type: ignore[attr-defined]
    await room.tasks.sweep()
    back = await room.tasks.status(alice, silent.id)
    assert back.state is TaskState.PENDING
    assert back.history[-1].detail == "the worker went silent"
    again = [d.message for d in (await room.delivery.receive(bob, wait=0)).deliveries]
    assert [(m.kind, (m.meta or {}).get("requeued")) for m in again] == [("task", True)]
    stale = await room.tasks.send(alice, to="bob", payload="never taken")
    clock.advance(room.settings.task_ttl + 1)  # type: ignore[attr-defined]
    await room.tasks.sweep()
    gone = await room.tasks.status(alice, stale.id)
    assert gone.state is TaskState.EXPIRED
    assert gone.history[-1].detail == "its time to live ran out"
    told = [d.message.kind for d in (await room.delivery.receive(alice, wait=0)).deliveries]
    assert "failure" in told


async def test_open_tasks_of_a_worker_who_left_go_back_to_the_sender(room: Hub) -> None:
    """Nobody will work a task whose worker left: pending or claimed, it fails back to the
    sender at the next sweep. A silent worker still here gets its claim offered again."""
    alice, bob = await join(room, "alice"), await join(room, "bob")
    carol = await join(room, "carol")
    claimed = await room.tasks.send(alice, to="bob", payload="slow")
    to_carol = await room.tasks.send(alice, to="carol", payload="slower")
    for worker in (bob, carol):
        got = await room.delivery.receive(worker, wait=0)  # taken: in progress
        await room.delivery.ack(worker, through=got.deliveries[-1].message.seq)
    unclaimed = await room.tasks.send(alice, to="bob", payload="never read")
    await room.registry.leave(bob)
    room.clock.advance(room.settings.task_visibility_timeout + 1)  # type: ignore[attr-defined]
    await room.tasks.sweep()

    for task in (claimed, unclaimed):
        failed = await room.tasks.status(alice, task.id)
        assert (failed.state, failed.error) == (TaskState.FAILED, "failed: the worker bob is gone")
        assert failed.history[-1].detail == "the worker is gone"
    told = [d.message for d in (await room.delivery.receive(alice, wait=0)).deliveries]
    assert [m.kind for m in told] == ["failure", "failure"]
    assert (await room.tasks.status(alice, to_carol.id)).state is TaskState.PENDING
