"""Tasks through the services: every ending, the input round trip, races, timeouts, expiry."""

from __future__ import annotations

import asyncio

import pytest

from caucus.domain.peers import Peer
from caucus.domain.tasks import TaskState
from caucus.errors import Conflict, Forbidden, NotFound
from caucus.services.hub import Hub
from caucus.testing import FakeClock


async def pair(hub: Hub) -> tuple[Peer, Peer]:
    alice = (await hub.principals.register(name="alice")).peer
    bob = (await hub.principals.register(name="bob")).peer
    return alice, bob


async def inbox(hub: Hub, peer: Peer) -> list[tuple[str, str, str]]:
    got = await hub.delivery.receive(peer, wait=0)
    if got.deliveries:
        await hub.delivery.ack(peer, seqs=[d.message.seq for d in got.deliveries])
    return [(d.message.kind, d.message.sender, d.message.content) for d in got.deliveries]


async def test_send_receive_reply_round_trip(hub: Hub) -> None:
    alice, bob = await pair(hub)
    task = await hub.tasks.send(alice, to="bob", payload="summarise the log", subject="logs")
    assert (task.state, task.thread) == (TaskState.PENDING, task.id)
    assert await inbox(hub, bob) == [("task", "alice", "summarise the log")]
    assert (await hub.tasks.status(bob, task.id)).state is TaskState.IN_PROGRESS  # claimed
    done = await hub.tasks.reply(bob, task.id, "3 errors, all timeouts")
    assert done.state is TaskState.COMPLETED
    assert await inbox(hub, alice) == [("result", "bob", "3 errors, all timeouts")]
    history = [(e.state, e.actor) for e in (await hub.tasks.status(alice, task.id)).history]
    assert history == [("pending", "alice"), ("in_progress", "bob"), ("completed", "bob")]
    assert (await hub.tasks.status(alice, task.id)).state.a2a == "completed"


async def test_the_input_round_trip_returns_the_task_to_the_worker(hub: Hub) -> None:
    alice, bob = await pair(hub)
    task = await hub.tasks.send(alice, to="bob", payload="deploy it")
    await inbox(hub, bob)
    parked = await hub.tasks.request_input(bob, task.id, "which region?")
    assert parked.state is TaskState.INPUT_REQUIRED
    assert parked.state.a2a == "input-required"
    assert await inbox(hub, alice) == [("input_request", "bob", "which region?")]
    answered = await hub.tasks.reply(alice, task.id, "eu-west")  # the sender's reply answers
    assert (answered.state, answered.answer) == (TaskState.PENDING, "eu-west")
    got = await hub.delivery.receive(bob, wait=0)
    (again,) = got.deliveries
    assert again.message.kind == "task"
    assert again.message.meta is not None
    assert again.message.meta["answer"] == "eu-west"
    await hub.tasks.reply(bob, task.id, "deployed to eu-west")
    assert await inbox(hub, alice) == [("result", "bob", "deployed to eu-west")]


async def test_fail_and_cancel_reach_the_other_side(hub: Hub) -> None:
    alice, bob = await pair(hub)
    first = await hub.tasks.send(alice, to="bob", payload="a")
    second = await hub.tasks.send(alice, to="bob", payload="b")
    await inbox(hub, bob)
    assert (await hub.tasks.fail(bob, first.id, "cannot parse")).state is TaskState.FAILED
    assert (await hub.tasks.cancel(alice, second.id)).state is TaskState.CANCELED
    assert await inbox(hub, alice) == [("failure", "bob", "cannot parse")]
    assert [k for k, _, _ in await inbox(hub, bob)] == ["task_canceled"]


async def test_only_the_right_party_may_act_and_a_second_ending_is_409(hub: Hub) -> None:
    alice, bob = await pair(hub)
    carol = (await hub.principals.register(name="carol")).peer
    task = await hub.tasks.send(alice, to="bob", payload="x")
    with pytest.raises(Forbidden):
        await hub.tasks.cancel(bob, task.id)
    with pytest.raises(Forbidden):
        await hub.tasks.fail(alice, task.id, "not mine to fail")
    with pytest.raises(NotFound):
        await hub.tasks.status(carol, task.id)  # strangers do not learn a task exists
    await hub.tasks.reply(bob, task.id, "done")
    with pytest.raises(Conflict):
        await hub.tasks.fail(bob, task.id, "too late")
    with pytest.raises(Conflict):
        await hub.tasks.cancel(alice, task.id)
    assert (await hub.tasks.status(alice, task.id)).state is TaskState.COMPLETED
    assert [k for k, _, _ in await inbox(hub, alice)] == ["result"]  # exactly one outcome


async def test_racing_endings_have_exactly_one_winner(hub: Hub) -> None:
    alice, bob = await pair(hub)
    task = await hub.tasks.send(alice, to="bob", payload="race")
    outcomes = await asyncio.gather(
        hub.tasks.reply(bob, task.id, "done"),
        hub.tasks.fail(bob, task.id, "failed"),
        hub.tasks.cancel(alice, task.id),
        return_exceptions=True,
    )
    winners = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(winners) == 1
    assert sum(isinstance(o, Conflict) for o in outcomes) == 2
    final = await hub.tasks.status(alice, task.id)
    assert final.state is winners[0].state  # type: ignore[union-attr]
    assert len([e for e in final.history if not TaskState(e.state).open]) == 1


async def test_a_silent_worker_loses_the_claim_after_the_visibility_timeout(
    hub: Hub, clock: FakeClock
) -> None:
    alice = (await hub.principals.register(name="alice")).peer
    joined = await hub.principals.register(name="bob")
    bob = joined.peer
    task = await hub.tasks.send(alice, to="bob", payload="slow job")
    await inbox(hub, bob)
    clock.advance(hub.settings.task_visibility_timeout - 1)
    await hub.principals.agent(joined.token)  # still here: silent about the task only
    await hub.maintain()
    assert (await hub.tasks.status(alice, task.id)).state is TaskState.IN_PROGRESS
    clock.advance(2)
    await hub.tasks.sweep()
    assert (await hub.tasks.status(alice, task.id)).state is TaskState.PENDING
    assert await inbox(hub, bob) == [("task", "hub", "slow job")]  # offered again
    assert (await hub.tasks.status(alice, task.id)).state is TaskState.IN_PROGRESS


async def test_a_gone_workers_task_waits_marked_through_its_grace_then_fails_back(
    hub: Hub, clock: FakeClock
) -> None:
    """A worker that crashed is reaped before its claim lapses: the task is not requeued to
    nobody. It waits, marked, while the worker may still come back; once its grace is over
    (the worker is forgotten) it fails back to the sender, who is told."""
    sender = await hub.principals.register(name="alice")
    alice = sender.peer
    bob = (await hub.principals.register(name="bob")).peer
    task = await hub.tasks.send(alice, to="bob", payload="slow job")
    await inbox(hub, bob)
    for _ in range(3):  # bob is reaped; however often the sweep meets the task, one note
        clock.advance(hub.settings.task_visibility_timeout + 1)
        await hub.principals.agent(sender.token)  # alice is still here
        await hub.maintain()
        await hub.tasks.sweep()
    waiting = await hub.tasks.status(alice, task.id)
    assert waiting.state is TaskState.IN_PROGRESS
    notes = [e.detail for e in waiting.history if e.actor == "hub"]
    assert notes == ["the worker is away: the task waits for it until its grace ends"]
    assert await inbox(hub, bob) == []  # nothing requeued into an absent inbox

    clock.advance(hub.settings.reaped_grace + 1)
    await hub.principals.agent(sender.token)
    await hub.maintain()  # bob is forgotten
    await hub.tasks.sweep()
    failed = await hub.tasks.status(alice, task.id)
    assert (failed.state, failed.error) == (TaskState.FAILED, "failed: the worker bob is gone")
    assert ("failure", "hub", "failed: the worker bob is gone") in await inbox(hub, alice)


async def test_unclaimed_and_parked_tasks_expire_and_the_sender_is_told(
    hub: Hub, clock: FakeClock
) -> None:
    alice, bob = await pair(hub)
    await hub.principals.register(name="carol")  # never listens: her task stays unclaimed
    unclaimed = await hub.tasks.send(alice, to="carol", payload="never read")
    parked = await hub.tasks.send(alice, to="bob", payload="needs input")
    await inbox(hub, bob)
    await hub.tasks.request_input(bob, parked.id, "?")
    await inbox(hub, alice)
    clock.advance(hub.settings.task_ttl - 1)
    await hub.tasks.sweep()
    assert (await hub.tasks.status(alice, unclaimed.id)).state is TaskState.PENDING
    clock.advance(2)
    await hub.tasks.sweep()
    for task in (unclaimed, parked):
        assert (await hub.tasks.status(alice, task.id)).state is TaskState.EXPIRED
    told = await inbox(hub, alice)
    assert [(k, s) for k, s, _ in told] == [("failure", "hub"), ("failure", "hub")]


async def test_tasks_are_listed_by_role_and_state(hub: Hub) -> None:
    alice, bob = await pair(hub)
    one = await hub.tasks.send(alice, to="bob", payload="1")
    await hub.tasks.send(alice, to="bob", payload="2")
    await hub.tasks.cancel(alice, one.id)
    sent = await hub.tasks.listing(alice, "sent", None)
    assert len(sent) == 2
    assert [t.id for t in await hub.tasks.listing(alice, "sent", "canceled")] == [one.id]
    assert len(await hub.tasks.listing(bob, "received", "pending")) == 1
