"""Liveness: derived states, reaping, going offline, resuming with the inbox intact, forgetting;
a name is never handed over without its token."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from caucus.client import HubClient
from caucus.errors import Hint, NameInUse, Unauthorized
from caucus.services.hub import Hub
from caucus.testing import FakeClock, make_hub, serve
from tests.conftest import eventually


async def states(hub: Hub) -> dict[str, str]:
    return {v.name: v.state.value for v in await hub.registry.peers()}


async def test_states_go_online_quiet_stale_then_reaped(hub: Hub, clock: FakeClock) -> None:
    await hub.principals.register(name="bob")
    assert (await states(hub))["bob"] == "online"
    clock.advance(61)
    assert (await states(hub))["bob"] == "quiet"
    clock.advance(120)
    assert (await states(hub))["bob"] == "stale"
    await hub.maintain()
    assert (await states(hub))["bob"] == "stale"  # not yet past the TTL
    clock.advance(120)
    await hub.maintain()
    assert (await states(hub))["bob"] == "reaped"


async def test_every_authenticated_call_counts_as_a_sign_of_life(
    hub: Hub, clock: FakeClock
) -> None:
    reg = await hub.principals.register(name="bob")
    for _ in range(5):
        clock.advance(200)
        await hub.principals.agent(reg.token)
        await hub.maintain()
    assert (await states(hub))["bob"] == "online"


async def test_an_open_long_poll_keeps_a_peer_alive(hub: Hub, clock: FakeClock) -> None:
    reg = await hub.principals.register(name="bob")
    listening = asyncio.create_task(hub.delivery.receive(reg.peer, wait=20))
    await eventually(lambda: hub.notifier.is_listening(reg.peer.id), what="bob listening")
    clock.advance(10_000)
    await hub.maintain()
    assert (await states(hub))["bob"] == "online"
    other = await hub.principals.register(name="alice")
    await hub.delivery.send(other.peer, to="bob", content="hi")
    assert len((await listening).deliveries) == 1


async def test_a_reaped_peer_revives_in_place_with_inbox_and_channels(
    hub: Hub, clock: FakeClock
) -> None:
    bob = await hub.principals.register(name="bob")
    await hub.channels.join(bob.peer, "#dev")
    clock.advance(301)
    alice = await hub.principals.register(name="alice")
    await hub.maintain()
    assert (await states(hub))["bob"] == "reaped"
    receipt = await hub.delivery.send(alice.peer, to="bob", content="while you were out")
    assert receipt.missed == ["bob"]
    await hub.delivery.send(alice.peer, to="#dev", content="channel news")

    peer = await hub.principals.agent(bob.token)  # any call revives
    assert peer.id == bob.peer.id
    assert (await states(hub))["bob"] == "online"
    got = await hub.delivery.receive(peer, wait=0)
    assert [d.message.content for d in got.deliveries] == ["while you were out", "channel news"]
    assert await hub.channels.memberships(peer) == ["#dev"]


async def test_a_reaped_name_is_held_for_its_peer_and_resumed_only_with_its_token(
    hub: Hub, clock: FakeClock
) -> None:
    bob = await hub.principals.register(name="bob")
    alice = await hub.principals.register(name="alice")
    await hub.delivery.send(alice.peer, to="bob", content="kept for you")
    clock.advance(301)
    await hub.principals.agent(alice.token)
    await hub.maintain()
    assert (await states(hub))["bob"] == "reaped"
    with pytest.raises(NameInUse) as caught:  # no takeover of a resumable identity
        await hub.principals.register(name="bob")
    held = caught.value
    assert (held.extra["holder_state"], held.hint) == ("reaped", Hint.RESUME)
    assert held.extra["frees_at"] == pytest.approx(clock.now() + hub.settings.reaped_grace, 2)
    assert "until" in held.detail
    resumed = await hub.principals.register(name="bob", token=bob.token)
    assert (resumed.outcome, resumed.peer.id) == ("resumed", bob.peer.id)
    got = await hub.delivery.receive(resumed.peer, wait=0)
    assert [d.message.content for d in got.deliveries] == ["kept for you"]


async def test_a_peer_reaped_past_its_grace_is_forgotten(hub: Hub, clock: FakeClock) -> None:
    bob = await hub.principals.register(name="bob")
    clock.advance(301)
    await hub.maintain()
    clock.advance(hub.settings.reaped_grace + 1)
    await hub.maintain()
    assert "bob" not in await states(hub)
    with pytest.raises(Unauthorized, match="expired"):
        await hub.principals.agent(bob.token)


async def test_a_name_is_never_handed_over_without_its_token_at_any_stage(
    hub: Hub, clock: FakeClock
) -> None:
    old = await hub.principals.register(name="bob", skills=["sql"])
    for step in (0, hub.settings.quiet_after + 1, hub.settings.stale_after):
        clock.advance(step)
        with pytest.raises(NameInUse) as caught:
            await hub.principals.register(name="bob")
        assert caught.value.extra["frees_at"] is None  # live: only leave or a kick frees it
        assert "last active" in caught.value.detail
    await hub.registry.offline(old.peer)
    with pytest.raises(NameInUse) as caught:
        await hub.principals.register(name="bob")
    assert caught.value.extra["holder_state"] == "offline"
    await hub.registry.leave(old.peer)
    fresh = await hub.principals.register(name="bob")  # freed by leave
    assert (fresh.outcome, fresh.token != old.token) == ("created", True)


async def test_going_offline_shows_at_once_and_the_token_resumes_with_the_inbox(
    hub: Hub, clock: FakeClock
) -> None:
    bob = await hub.principals.register(name="bob")
    alice = await hub.principals.register(name="alice")
    await hub.channels.join(bob.peer, "#dev")
    assert await hub.registry.offline(bob.peer)
    assert (await states(hub))["bob"] == "offline"
    assert not await hub.registry.offline(bob.peer)  # once
    sent = await hub.delivery.send(alice.peer, to="bob", content="while you were offline")
    assert sent.missed == ["bob"]
    clock.advance(hub.settings.reaped_grace - 1)
    await hub.maintain()
    back = await hub.principals.register(name="bob", token=bob.token)
    assert (back.outcome, back.peer.id) == ("resumed", bob.peer.id)
    assert (await states(hub))["bob"] == "online"
    assert await hub.channels.memberships(back.peer) == ["#dev"]
    got = await hub.delivery.receive(back.peer, wait=0)
    assert [d.message.content for d in got.deliveries] == ["while you were offline"]


async def test_an_offline_peer_past_its_grace_is_forgotten_and_its_name_freed(
    hub: Hub, clock: FakeClock
) -> None:
    bob = await hub.principals.register(name="bob")
    await hub.registry.offline(bob.peer)
    clock.advance(hub.settings.reaped_grace + 1)
    await hub.maintain()
    assert "bob" not in await states(hub)
    assert (await hub.principals.register(name="bob")).outcome == "created"


async def test_reregistering_keeps_skills_and_description_unless_given(hub: Hub) -> None:
    reg = await hub.principals.register(name="bob", skills=["sql"], description="db person")
    again = await hub.principals.register(name="bob", token=reg.token)
    assert (again.peer.skills, again.peer.description) == (
        [{"id": "sql", "name": "sql"}],
        "db person",
    )
    changed = await hub.principals.register(name="bob", token=reg.token, skills=[])
    assert changed.peer.skills == []
    assert changed.peer.description == "db person"


async def test_reaping_and_revival_over_http(tmp_path: Path) -> None:
    clock = FakeClock()
    async with (
        make_hub(tmp_path, clock=clock) as h,
        serve(h) as url,
        HubClient(url) as alice,
        HubClient(url) as bob,
    ):
        await alice.register("alice")
        await bob.register("bob")

        async def bob_state() -> str:
            return {p.name: p.state for p in await alice.peers()}["bob"]

        clock.advance(h.settings.peer_ttl + 1)
        await h.maintain()
        assert await bob_state() == "reaped"
        result = await alice.send("bob", "are you there?")
        assert result.missed == ["bob"]
        assert (await bob.peek()).pending == 1  # bob's call revives him, inbox intact
        assert await bob_state() == "online"
        got = await bob.receive(timeout=5)
        assert [m.content for m in got.messages] == ["are you there?"]


async def test_a_name_that_differs_from_a_held_one_only_by_case_is_refused(
    hub: Hub, clock: FakeClock
) -> None:
    alice = await hub.principals.register(name="alice")
    bob = await hub.principals.register(name="bob")
    for twin in ("Alice", "ALICE", "aLiCe"):
        with pytest.raises(NameInUse) as caught:
            await hub.principals.register(name=twin)
        assert caught.value.extra["name"] == "alice"
        assert "only by case" in caught.value.detail
        with pytest.raises(NameInUse):  # nor by renaming into it
            await hub.principals.register(name=twin, token=bob.token)
    clock.advance(301)
    await hub.maintain()  # reaped, so held for alice still
    with pytest.raises(NameInUse):
        await hub.principals.register(name="ALICE")
    renamed = await hub.principals.register(name="Alice", token=alice.token)  # her own, recased
    assert (renamed.peer.name, renamed.outcome) == ("Alice", "resumed")
    await hub.registry.leave(renamed.peer)
    assert (await hub.principals.register(name="alice")).outcome == "created"
