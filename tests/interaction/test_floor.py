"""The talking stick over HTTP (and the MCP tool): the 423 gate, hands, pass and drop, and a
floor that never outlives its holder."""

from __future__ import annotations

import pytest

from caucus.client import HubClient
from caucus.errors import ChannelClosed, FloorHeld, Forbidden, NotFound
from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from tests.conftest import ClientFactory, eventually


async def test_the_holder_speaks_and_others_get_423_in_that_scope_only(
    connect: ClientFactory,
) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    floor = await alice.floor("take", "all", "presenting the plan")
    assert (floor.holder, floor.reason) == ("alice", "presenting the plan")
    await alice.send("all", "here is the plan")
    with pytest.raises(FloorHeld) as caught:
        await bob.send("all", "interrupting")
    assert caught.value.status == 423
    assert caught.value.extra["holder"] == "alice"
    assert "raise" in caught.value.detail
    await bob.send("carol", "direct messages still flow")
    await bob.join_channel("#side")
    await carol.join_channel("#side")
    await bob.send("#side", "other scopes still flow")
    notices = [m.content for m in (await carol.receive(timeout=5)).messages if m.kind == "system"]
    assert "alice took the floor in all" in notices


async def test_hands_are_first_come_first_served_and_pass_hands_over(
    connect: ClientFactory,
) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    await alice.floor("take", "all")
    assert (await bob.floor("take", "all")).hands == ["bob"]  # a contested take queues
    assert (await carol.floor("raise", "all")).hands == ["bob", "carol"]
    with pytest.raises(Forbidden):
        await bob.floor("pass", "all")
    passed = await alice.floor("pass", "all")
    assert (passed.holder, passed.hands) == ("bob", ["carol"])
    await bob.send("all", "my turn")
    with pytest.raises(FloorHeld):
        await alice.send("all", "wait")
    assert (await carol.floor("lower", "all")).hands == []
    dropped = await bob.floor("drop", "all")
    assert dropped.holder is None
    await alice.send("all", "free for all again")


async def test_the_floor_passes_on_when_its_holder_leaves_or_is_kicked(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    await alice.floor("take", "all")
    await bob.floor("raise", "all")
    await carol.floor("raise", "all")
    await alice.leave()

    async def held_by(name: str) -> bool:
        # At once on SQLite; on a shared database the book changes under its lock just after.
        return (await carol.floor("status", "all")).holder == name

    await eventually(lambda: held_by("bob"), what="the floor to pass to bob")
    await operator.kick("bob")
    await eventually(lambda: held_by("carol"), what="the floor to pass to carol")


async def test_leaving_the_channel_passes_its_floor(connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.join_channel("#ops")
    await bob.join_channel("#ops")
    with pytest.raises(Forbidden):
        await (await connect("outsider")).floor("take", "#ops")  # members only
    await alice.floor("take", "#ops")
    await bob.floor("raise", "#ops")
    await alice.leave_channel("#ops")

    async def bob_holds() -> bool:
        return (await bob.floor("status", "#ops")).holder == "bob"

    await eventually(bob_holds, what="the floor to pass to bob")


async def test_the_operator_is_never_barred_clears_floors_and_stop_clears_all(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.join_channel("#ops")
    await alice.floor("take", "all")
    await alice.floor("take", "#ops")
    await operator.say("all", "the operator speaks regardless")
    cleared = await operator.clear_floor("all")
    assert cleared.holder is None
    await bob.send("all", "free again")
    await operator.stop()

    async def ops_free() -> bool:
        # On a database several processes share, the book changes under its row lock just
        # after the stop is recorded.
        return (await alice.floor("status", "#ops")).holder is None

    await eventually(ops_free, what="the stop to clear #ops")


async def test_the_floor_over_mcp(url: str) -> None:
    from mcp import Client

    from tests.mcptools import call, fail

    async with (
        Client(f"{url}/mcp", mode="legacy") as alice,
        Client(f"{url}/mcp", mode="legacy") as bob,
    ):
        await call(alice, "join", name="alice")
        await call(bob, "join", name="bob")
        assert (await call(alice, "floor", action="take"))["holder"] == "alice"
        code, text = await fail(bob, "say", to="all", content="me too")
        assert code == "floor_held"
        assert "Next: call floor with action 'raise'" in text
        assert (await call(bob, "floor", action="raise", scope="all"))["hands"] == ["bob"]
        assert (await call(alice, "floor", action="pass", scope="all"))["holder"] == "bob"
        assert (await call(bob, "say", to="all", content="thanks"))["delivered_to"] == ["alice"]
        assert (await fail(bob, "floor", action="shout"))[0] == "invalid_request"


async def test_a_going_offline_holder_passes_the_floor(hub: Hub) -> None:
    alice = await hub.principals.register(name="alice")
    bob = await hub.principals.register(name="bob")
    await hub.floors.act(alice.peer, "take", "all")
    await hub.floors.act(bob.peer, "raise", "all")
    await hub.registry.offline(alice.peer)

    async def bob_holds() -> bool:
        return (await hub.floors.act(bob.peer, "status", "all")).holder == "bob"

    await eventually(bob_holds, what="the floor to pass to bob")


async def test_a_reaped_holder_passes_the_floor(hub, clock) -> None:  # type: ignore[no-untyped-def]
    alice = await hub.principals.register(name="alice")
    bob = await hub.principals.register(name="bob")
    await hub.floors.act(alice.peer, "take", "all")
    await hub.floors.act(bob.peer, "raise", "all")
    clock.advance(hub.settings.peer_ttl + 1)
    await hub.principals.agent(bob.token)  # bob is still around, alice is not
    await hub.maintain()
    assert (await hub.floors.act(bob.peer, "status", "all")).holder == "bob"


async def test_a_gone_holders_floor_passes_with_a_sentence_that_reads_right(
    connect: ClientFactory,
) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    await alice.floor("take", "all")
    await bob.floor("raise", "all")
    await alice.leave()

    async def told() -> list[str]:
        return [m.content for m in (await carol.receive(timeout=1)).messages if m.kind == "system"]

    heard: list[str] = []

    async def passed() -> bool:
        heard.extend(await told())
        return "bob has the floor in all (alice is gone)" in heard

    await eventually(passed, what=f"the sentence of the floor passing (heard {heard})")
    await bob.floor("pass", "all")
    await eventually(
        lambda: _heard(carol, heard, "the floor in all is free (bob passed it)"),
        what="the floor freed",
    )


async def _heard(client: HubClient, heard: list[str], sentence: str) -> bool:
    heard.extend(m.content for m in (await client.receive(timeout=1)).messages)
    return sentence in heard


async def test_closing_a_channel_frees_its_floor_and_hands_and_the_operator_reopens_it(
    connect: ClientFactory, operator: OperatorClient, live_hub: Hub
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    for peer in (alice, bob):
        await peer.join_channel("#auth")
    await alice.floor("take", "#auth", "migrating")
    await bob.floor("raise", "#auth")
    assert await operator.close_channel("#auth") == ["alice", "bob"]

    async def freed() -> bool:
        return all(f.scope != "#auth" for f in live_hub.floors.status())

    await eventually(freed, what="the closed channel's floor to go")
    with pytest.raises(ChannelClosed):
        await bob.join_channel("#auth")

    assert await operator.reopen_channel("#auth") is True
    assert await operator.reopen_channel("#auth") is False  # open already
    await bob.join_channel("#auth")
    floor = await bob.floor("take", "#auth")  # a reopened channel's floor starts free
    assert (floor.holder, floor.hands) == ("bob", [])
    await bob.send("#auth", "back")
    with pytest.raises(NotFound):
        await operator.reopen_channel("#never")
