"""The storage contract for tasks (issue 14: the contract first, before the code moves): what
every backend does with a task's creation, its transitions (the acting party, the states a
move is allowed from, the item it sends, all at once), its claim by a receive, the sweeps,
and two parties racing for one task."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from caucus.domain.messages import NewMessage
from caucus.domain.tasks import Task, TaskState
from caucus.errors import Conflict, Forbidden, NotFound
from caucus.storage.base import Store
from tests.contract.test_store_contract import NOW, claim, peer

_ids = itertools.count(1)
OPEN = (TaskState.PENDING, TaskState.IN_PROGRESS, TaskState.INPUT_REQUIRED)


def item(
    sender: str, sender_id: int, to: str, kind: str, task_id: str, ts: float = NOW
) -> NewMessage:
    return NewMessage(
        id=f"m_t{next(_ids)}",
        ts=ts,
        sender_id=sender_id,
        sender=sender,
        to=to,
        kind=kind,
        content=f"{kind} of {task_id}",
        meta={"task_id": task_id},
    )


async def new_task(store: Store, sender: Any, worker: Any, *, ttl: float = 3600) -> Task:
    task_id = f"t_{next(_ids)}"
    task, outcome = await store.create_task(
        task_id=task_id,
        sender_id=sender.id,
        sender=sender.name,
        to=worker.name,
        subject="review",
        payload="please review",
        thread=f"task-{task_id}",
        now=NOW,
        expires_at=NOW + ttl,
        message=item(sender.name, sender.id, worker.name, "task", task_id),
    )
    assert [r.name for r in outcome.recipients] == [worker.name]
    return task


async def move(
    store: Store,
    task: Task,
    actor: Any,
    role: str,
    to_state: TaskState,
    *,
    allowed: tuple[TaskState, ...] = OPEN,
    fields: dict[str, Any] | None = None,
    now: float = NOW + 1,
    tell: Any = None,
) -> tuple[Task, Any]:
    def notify(t: Task) -> tuple[NewMessage, str] | None:
        if tell is None:
            return None
        return item(actor.name, actor.id, tell.name, "result", t.id, ts=now), tell.name

    return await store.task_transition(
        task.id,
        actor_id=actor.id,
        actor=actor.name,
        role=role,
        allowed=allowed,
        to_state=to_state,
        now=now,
        fields=fields or {},
        notify=notify,
    )


async def test_a_task_is_stored_pending_and_its_item_reaches_the_worker(store: Store) -> None:
    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    task = await new_task(store, alice, bob)
    assert (task.state, task.sender, task.worker) == (TaskState.PENDING, "alice", "bob")
    assert await store.task_parties(task.id) == (alice.id, bob.id)
    got = await claim(store, bob)
    assert [d.message.kind for d in got.deliveries] == ["task"]
    # Receiving the item claims the task, in the same transaction.
    claimed = await store.get_task(task.id)
    assert claimed is not None
    assert claimed.state is TaskState.IN_PROGRESS
    assert [e.state for e in claimed.history] == ["pending", "in_progress"]


async def test_a_task_for_nobody_is_not_created(store: Store) -> None:
    alice = await peer(store, "alice")
    ghost = type("Ghost", (), {"id": 999, "name": "ghost"})()
    with pytest.raises(NotFound):
        await new_task(store, alice, ghost)
    assert await store.all_tasks(None) == []


async def test_a_transition_checks_the_party_and_the_state_and_sends_its_item(
    store: Store,
) -> None:
    alice, bob, carol = (
        await peer(store, "alice"),
        await peer(store, "bob"),
        await peer(store, "carol"),
    )
    task = await new_task(store, alice, bob)
    with pytest.raises(NotFound):  # no party to it: it is not carol's to see
        await move(store, task, carol, "worker", TaskState.COMPLETED)
    with pytest.raises(Forbidden):  # the sender cannot complete the worker's task
        await move(store, task, alice, "worker", TaskState.COMPLETED)
    done, outcome = await move(
        store, task, bob, "worker", TaskState.COMPLETED, fields={"result": "lgtm"}, tell=alice
    )
    assert (done.state, done.result) == (TaskState.COMPLETED, "lgtm")
    assert outcome is not None
    assert [r.name for r in outcome.recipients] == ["alice"]
    with pytest.raises(Conflict):  # completed is not open: nothing moves
        await move(store, task, alice, "sender", TaskState.CANCELED, tell=bob)
    after = await store.get_task(task.id)
    assert after is not None
    assert after.state is TaskState.COMPLETED
    assert [e.state for e in after.history][-1] == "completed"
    assert [d.message.kind for d in (await claim(store, alice)).deliveries] == ["result"]


async def test_two_parties_racing_for_one_task_one_wins(store: Store) -> None:
    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    for _ in range(5):
        task = await new_task(store, alice, bob)
        outcomes = await asyncio.gather(
            move(store, task, bob, "worker", TaskState.COMPLETED, tell=alice),
            move(store, task, alice, "sender", TaskState.CANCELED, tell=bob),
            return_exceptions=True,
        )
        won = [o for o in outcomes if not isinstance(o, BaseException)]
        lost = [o for o in outcomes if isinstance(o, BaseException)]
        assert len(won) == 1
        assert len(lost) == 1
        assert isinstance(lost[0], Conflict)
        final = await store.get_task(task.id)
        assert final is not None
        assert final.state is won[0][0].state


async def test_lists_by_role_and_state(store: Store) -> None:
    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    first = await new_task(store, alice, bob)
    second = await new_task(store, bob, alice)
    await move(store, first, bob, "worker", TaskState.FAILED, fields={"error": "no"})
    assert [t.id for t in await store.list_tasks(alice.id, "sent", None)] == [first.id]
    assert [t.id for t in await store.list_tasks(alice.id, "received", None)] == [second.id]
    assert [t.id for t in await store.list_tasks(bob.id, "received", TaskState.FAILED)] == [
        first.id
    ]
    assert await store.list_tasks(bob.id, "received", TaskState.PENDING) == []
    assert {t.id for t in await store.all_tasks(None)} == {first.id, second.id}
    assert [t.id for t in await store.all_tasks(TaskState.PENDING)] == [second.id]


async def test_the_sweep_requeues_a_silent_claim_and_expires_the_stale(store: Store) -> None:
    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    silent = await new_task(store, alice, bob)
    await claim(store, bob, ack=None)  # bob takes the item: in progress since NOW
    got = await claim(store, bob, now=NOW + 1)
    await store.ack(bob.id, through=max((d.message.seq for d in got.deliveries), default=0))
    stale = await new_task(store, alice, bob, ttl=10)

    def requeue(t: Task) -> NewMessage:
        return item("hub", 0, t.worker, "task", t.id, ts=NOW + 100)

    def expire(t: Task) -> NewMessage:
        return item("hub", 0, t.sender, "failure", t.id, ts=NOW + 100)

    outcomes = await store.sweep_tasks(NOW + 100, NOW + 50, requeue, expire)
    assert sorted(r.name for o in outcomes for r in o.recipients) == ["alice", "bob"]
    back = await store.get_task(silent.id)
    gone = await store.get_task(stale.id)
    assert back is not None
    assert gone is not None
    assert back.state is TaskState.PENDING
    assert gone.state is TaskState.EXPIRED
    # A second sweep finds nothing more to do.
    assert await store.sweep_tasks(NOW + 101, NOW + 51, requeue, expire) == []
