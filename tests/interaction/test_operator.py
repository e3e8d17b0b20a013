"""The operator's powers over real HTTP: modes, speaking, per-peer control, channels, budget."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from caucus.client import HubClient, InboundMessage
from caucus.errors import ChannelClosed, NotFound, RateLimited, RoomStopped, Unauthorized
from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from caucus.testing import FakeClock, make_hub
from tests.conftest import ClientFactory, eventually


def contents(messages: list[InboundMessage]) -> list[str]:
    return [m.content for m in messages]


async def test_pause_holds_chatter_but_the_operator_gets_through(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.send("bob", "before the pause")
    assert (await operator.pause()).mode == "paused"
    held = [await alice.send("bob", f"held {i}") for i in range(3)]  # accepted and stored
    said = await operator.say("bob", "operator here")
    batch = await bob.receive(timeout=5)
    assert [(m.sender, m.kind, m.content) for m in batch.messages] == [
        ("operator", "operator", "operator here")
    ]
    assert (await bob.receive(timeout=0)).messages == []  # chatter stays held
    assert (await operator.resume()).mode == "open"
    released = await bob.receive(timeout=5)
    assert contents(released.messages) == ["before the pause", "held 0", "held 1", "held 2"]
    seqs = [m.seq for m in released.messages]
    assert seqs == sorted(seqs)
    assert said.seq > held[-1].seq  # one seq order for both lanes


async def test_a_parked_receive_gets_held_chatter_the_moment_the_room_resumes(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await operator.pause()
    await alice.send("bob", "wait for it")
    waiting = asyncio.create_task(bob.receive(timeout=20))

    async def parked() -> bool:
        return (await operator.ping("bob")).listening

    await eventually(parked, what="bob parked")
    await operator.resume()
    batch = await asyncio.wait_for(waiting, 10)
    assert contents(batch.messages) == ["wait for it"]


async def test_stop_tells_every_peer_and_refuses_sends_until_resumed(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    await operator.stop("end of the session")
    for peer in (alice, bob, carol):
        (stop,) = (await peer.receive(timeout=5)).messages
        assert (stop.kind, stop.content, stop.sender) == ("control", "stop", "operator")
        assert stop.meta == {"reason": "end of the session"}
    with pytest.raises(RoomStopped) as caught:
        await alice.send("bob", "one more thing")
    assert caught.value.status == 409
    await operator.say("all", "the operator may still speak")
    await operator.resume()
    await alice.send("bob", "we are back")
    assert contents((await bob.receive(timeout=5)).messages) == [
        "the operator may still speak",
        "we are back",
    ]


async def test_pausing_one_peer_holds_only_its_chatter(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    assert (await operator.pause_peer("bob")).paused
    await alice.send("all", "to everyone")
    assert contents((await carol.receive(timeout=5)).messages) == ["to everyone"]
    assert (await bob.receive(timeout=0)).messages == []
    await operator.say("bob", "you are paused")
    assert contents((await bob.receive(timeout=5)).messages) == ["you are paused"]
    assert not (await operator.resume_peer("bob")).paused
    assert contents((await bob.receive(timeout=5)).messages) == ["to everyone"]


async def test_a_paused_peer_that_keeps_polling_is_not_reaped(tmp_path: Path) -> None:
    clock = FakeClock()
    async with make_hub(tmp_path, clock=clock) as hub:
        bob = await hub.principals.register(name="bob")
        await hub.control.pause_peer("bob", True)
        listening = asyncio.create_task(hub.delivery.receive(bob.peer, wait=20))
        await eventually(lambda: hub.notifier.is_listening(bob.peer.id), what="bob listening")
        clock.advance(hub.settings.peer_ttl * 3)
        await hub.maintain()
        assert [v.state.value for v in await hub.registry.peers()] == ["online"]
        await hub.control.interrupt("bob")
        (got,) = (await asyncio.wait_for(listening, 5)).deliveries
        assert got.message.content == "interrupt"


async def test_interrupt_reaches_a_paused_peer_and_is_not_replayed_after_a_reconnect(
    connect: ClientFactory, operator: OperatorClient, url: str
) -> None:
    bob = await connect("bob")
    await operator.pause_peer("bob")
    await operator.interrupt("bob", "stop editing main.py")
    (got,) = (await bob.receive(timeout=5)).messages
    assert (got.kind, got.content, got.meta) == (
        "control",
        "interrupt",
        {"reason": "stop editing main.py"},
    )
    # Not acknowledged, and then the session reconnects: the interrupt is not replayed.
    await operator.reset_peer("bob")  # queued, never received by this session either
    await operator.stop_peer("bob", "end of your shift")  # nor this
    again = HubClient(url, token=bob.token)
    try:
        reg = await again.register("bob")
        assert reg.outcome == "reaffirmed"
        assert (await again.peek()).pending == 0
        assert (await again.receive(timeout=0)).messages == []
    finally:
        await again.aclose()


async def test_kick_is_terminal(connect: ClientFactory, operator: OperatorClient) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.send("bob", "pending for bob")
    await operator.kick("bob")
    with pytest.raises(Unauthorized, match="removed by the operator"):
        await bob.peek()
    assert [p.name for p in await alice.peers()] == ["alice"]


async def test_closing_a_channel_tells_its_members_and_refuses_it_afterwards(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.join_channel("#ops")
    await bob.join_channel("#ops")
    assert sorted(await operator.close_channel("#ops")) == ["alice", "bob"]
    for peer in (alice, bob):
        (notice,) = (await peer.receive(timeout=5)).messages
        assert (notice.sender, notice.kind, notice.to) == ("hub", "system", "#ops")
    with pytest.raises(ChannelClosed):
        await alice.send("#ops", "anyone?")
    with pytest.raises(ChannelClosed):
        await bob.join_channel("#ops")
    (ops,) = await alice.channels()
    assert ops.members == []


async def test_the_operator_sets_the_room_wide_send_budget(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, _ = await connect("alice"), await connect("bob")
    await operator.set_rate(2, 0.5)
    await alice.send("bob", "1")
    await alice.send("bob", "2")
    with pytest.raises(RateLimited):
        await alice.send("bob", "3")


async def test_announce_reaches_everyone_and_reset_reopens_the_room(
    connect: ClientFactory, operator: OperatorClient, live_hub: Hub
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await operator.announce("the build is green", subject="ci")
    for peer in (alice, bob):
        (news,) = (await peer.receive(timeout=5)).messages
        assert (news.kind, news.content, news.meta) == (
            "announce",
            "the build is green",
            {"subject": "ci"},
        )
    await operator.pause_peer("bob")
    await operator.set_rate(1, 0.1)
    await operator.stop()
    state = await operator.reset("fresh start")
    assert state.model_dump() == {
        "mode": "open",
        "rate": {
            "capacity": live_hub.settings.send_rate_capacity,
            "refill": live_hub.settings.send_rate_refill,
        },
    }
    assert not (await operator.ping("bob")).paused
    kinds = [(m.kind, m.content) for m in (await bob.receive(timeout=5)).messages]
    assert kinds[-1] == ("control", "reset")


async def test_the_room_mode_survives_a_restart(tmp_path: Path) -> None:
    async with make_hub(tmp_path) as hub:
        await hub.control.stop()
    async with make_hub(tmp_path) as hub:
        assert hub.control.room.mode.value == "stopped"


async def test_stopping_one_peer_tells_only_that_peer(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await operator.stop_peer("bob", "end of your shift")
    (got,) = (await bob.receive(timeout=5)).messages
    assert (got.kind, got.content, got.meta) == ("control", "stop", {"reason": "end of your shift"})
    assert (await alice.receive(timeout=0)).messages == []
    assert (await operator.state()).mode == "open"
    await alice.send("bob", "the room is still open")
    with pytest.raises(NotFound):
        await operator.stop_peer("nobody")
