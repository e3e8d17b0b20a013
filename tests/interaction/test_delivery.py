"""At-least-once delivery: acks, redelivery, reconnects, and concurrent receives on one identity."""

from __future__ import annotations

import asyncio

from caucus.domain.peers import Peer
from caucus.services.hub import Hub
from caucus.testing import FakeClock
from tests.conftest import ClientFactory, eventually


async def join(hub: Hub, name: str) -> tuple[Peer, str]:
    reg = await hub.principals.register(name=name)
    return reg.peer, reg.token


async def test_a_batch_acknowledged_on_the_next_receive_never_comes_back(
    hub: Hub, clock: FakeClock
) -> None:
    alice, _ = await join(hub, "alice")
    bob, _ = await join(hub, "bob")
    for i in range(3):
        await hub.delivery.send(alice, to="bob", content=f"m{i}")
    first = await hub.delivery.receive(bob, wait=0)
    last = first.deliveries[-1].message.seq
    second = await hub.delivery.receive(bob, wait=0, ack_through=last)
    assert second.acked == 3
    assert second.deliveries == []
    clock.advance(3600)
    assert (await hub.delivery.receive(bob, wait=0)).deliveries == []


async def test_after_a_receive_that_took_everything_the_next_parks_without_a_write(
    hub: Hub,
) -> None:
    """A low-rate agent's round: the receive that acknowledges a batch finds nothing new, so it
    parks with no write at all; its acknowledgement rides on the claim the next message
    brings (one write per receive, not two)."""
    alice, _ = await join(hub, "alice")
    bob, _ = await join(hub, "bob")
    await hub.delivery.send(alice, to="bob", content="one")
    (first,) = (await hub.delivery.receive(bob, wait=0)).deliveries
    writes = hub._db.stats["write_batches"]
    parked = asyncio.ensure_future(
        hub.delivery.receive(bob, wait=30, ack_through=first.message.seq)
    )
    await eventually(lambda: hub.notifier.is_listening(bob.id))
    assert hub._db.stats["write_batches"] == writes  # parked: nothing claimed, nothing written
    await hub.delivery.send(alice, to="bob", content="two")
    result = await parked
    assert [d.message.content for d in result.deliveries] == ["two"]
    assert result.acked == 1
    # The send, and the claim with the ack, in one unit (`AppendClaim`).
    assert hub._db.stats["write_batches"] == writes + 1


async def test_two_sends_to_a_parked_receive_at_once_are_each_handed_out_once(
    hub: Hub,
) -> None:
    """The first send claims for the parked receive as it is stored; the second, stored after
    that claim, wakes the receive anew, so the next receive claims it at once."""
    alice, _ = await join(hub, "alice")
    bob, _ = await join(hub, "bob")
    parked = asyncio.ensure_future(hub.delivery.receive(bob, wait=30))
    await eventually(lambda: hub.notifier.is_listening(bob.id))
    await asyncio.gather(
        hub.delivery.send(alice, to="bob", content="one"),
        hub.delivery.send(alice, to="bob", content="two"),
    )
    first = await parked
    seen = [d.message.content for d in first.deliveries]
    through = first.deliveries[-1].message.seq
    if seen == ["one"]:
        second = await asyncio.wait_for(
            hub.delivery.receive(bob, wait=30, ack_through=through), timeout=10
        )
        seen += [d.message.content for d in second.deliveries]
        through = second.deliveries[-1].message.seq
    assert seen == ["one", "two"]
    assert (await hub.delivery.receive(bob, wait=0, ack_through=through)).deliveries == []


async def test_a_receive_that_a_send_claimed_for_gives_its_place_back(hub: Hub) -> None:
    """A receive answered by a send's claim is no longer findable as parked: the next send
    to its peer is stored alone and wakes the next receive."""
    alice, _ = await join(hub, "alice")
    bob, _ = await join(hub, "bob")
    parked = asyncio.ensure_future(hub.delivery.receive(bob, wait=30))
    await eventually(lambda: hub.notifier.is_listening(bob.id))
    await hub.delivery.send(alice, to="bob", content="one")
    (one,) = (await parked).deliveries
    assert not hub.delivery._parked
    await hub.delivery.send(alice, to="bob", content="two")
    again = await hub.delivery.receive(bob, wait=30, ack_through=one.message.seq)
    assert [d.message.content for d in again.deliveries] == ["two"]
    assert again.acked == 1


async def test_unacknowledged_messages_return_after_the_visibility_timeout(
    hub: Hub, clock: FakeClock
) -> None:
    alice, _ = await join(hub, "alice")
    bob, _ = await join(hub, "bob")
    await hub.delivery.send(alice, to="bob", content="important")
    await hub.delivery.receive(bob, wait=0)
    assert (await hub.delivery.receive(bob, wait=0)).deliveries == []
    clock.advance(hub.settings.visibility_timeout + 1)
    (again,) = (await hub.delivery.receive(bob, wait=0)).deliveries
    assert again.message.content == "important"
    assert again.redelivered
    assert again.delivery_count == 2


async def test_registering_again_is_a_reconnect_that_redelivers_at_once(hub: Hub) -> None:
    alice, _ = await join(hub, "alice")
    bob, bob_token = await join(hub, "bob")
    await hub.delivery.send(alice, to="bob", content="did you get this?")
    await hub.delivery.receive(bob, wait=0)  # the response is lost with the crashed session
    reg = await hub.principals.register(name="bob", token=bob_token)
    assert reg.outcome == "reaffirmed"
    assert reg.note is not None
    assert "delivered again" in reg.note
    (again,) = (await hub.delivery.receive(reg.peer, wait=0)).deliveries
    assert again.redelivered


async def test_a_parked_receive_is_superseded_by_a_newer_one(hub: Hub) -> None:
    alice, _ = await join(hub, "alice")
    bob, _ = await join(hub, "bob")
    older = asyncio.create_task(hub.delivery.receive(bob, wait=20))
    await eventually(lambda: hub.notifier.is_listening(bob.id), what="bob listening")
    newer = asyncio.create_task(hub.delivery.receive(bob, wait=20))
    superseded = await asyncio.wait_for(older, 5)
    assert superseded.superseded
    assert superseded.deliveries == []
    for i in range(5):
        await hub.delivery.send(alice, to="bob", content=f"m{i}")
    got = await asyncio.wait_for(newer, 5)
    # The newest receive gets the whole stream, in order, none split off to the older one.
    seen = [d.message.content for d in got.deliveries]
    rest = await hub.delivery.receive(bob, wait=0)
    seen += [d.message.content for d in rest.deliveries]
    assert seen == [f"m{i}" for i in range(5)]


async def test_concurrent_receives_never_split_or_lose_a_message(connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    sent = [(await alice.send("bob", f"m{i}")).seq for i in range(30)]
    # Many receives on one identity at once: every message reaches exactly one of them, the
    # batches do not interleave, and nothing is left behind.
    batches = await asyncio.gather(*[bob.receive(timeout=0, auto_ack=False) for _ in range(6)])
    got = [m.seq for b in batches for m in b.messages]
    assert sorted(got) == sent
    assert len(got) == len(set(got))
    for b in batches:
        seqs = [m.seq for m in b.messages]
        assert seqs == sorted(seqs)


async def test_messages_arrive_in_seq_order_across_senders(connect: ClientFactory) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    await asyncio.gather(
        *[alice.send("carol", f"a{i}") for i in range(20)],
        *[bob.send("carol", f"b{i}") for i in range(20)],
    )
    seqs: list[int] = []
    while len(seqs) < 40:
        batch = await carol.receive(timeout=5, limit=7)
        seqs += [m.seq for m in batch.messages]
    assert seqs == sorted(seqs)
    # Every batch but the last was acknowledged by the receive after it.
    assert (await carol.peek()).pending == len(batch.messages)
    await carol.flush_acks()
    assert (await carol.peek()).pending == 0


async def test_the_client_acknowledges_each_batch_on_its_next_receive(
    connect: ClientFactory,
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.send("bob", "one")
    await bob.receive(timeout=5)
    assert (await bob.peek()).pending == 1  # handed out, not yet acknowledged
    batch = await bob.receive(timeout=0)
    assert batch.acked == 1
    assert (await bob.peek()).pending == 0


async def test_explicit_acks_by_seq(connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    a = await alice.send("bob", "a")
    b = await alice.send("bob", "b")
    await bob.receive(timeout=5, auto_ack=False)
    assert await bob.ack(seqs=[a.seq]) == 1
    assert await bob.ack(seqs=[a.seq]) == 0  # acknowledging twice is harmless
    assert await bob.ack(through=b.seq) == 1
    assert (await bob.peek()).pending == 0


async def test_a_message_sent_to_a_peer_that_then_leaves_is_not_redelivered_to_a_newcomer(
    connect: ClientFactory,
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.send("bob", "for the first bob")
    await bob.leave()
    newcomer = await connect("bob")
    assert (await newcomer.peek()).pending == 0
