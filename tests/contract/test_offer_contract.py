"""The contract for the job board and announcements, run against each backend: the
repositories (an offer stored and counted, one pending claim per claimant, an assignment only
from open, expiry) and the rules above them, which the offer service applies in one unit of
work each (announced and opened or neither, claims, selection with its task and notices,
withdrawal, the task's ending settling its offer, announcement caps and catch-up)."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from caucus.domain.offers import Offer, OfferState
from caucus.domain.peers import Peer
from caucus.errors import CapHourly, CapInterval, CapOpenOffers, Conflict, Forbidden, NotFound
from caucus.services.hub import Hub
from caucus.storage.engine import Engine
from tests.contract.conftest import NOW, RoomFactory
from tests.contract.test_store_contract import peer

_ids = itertools.count(1)


async def stored_offer(db: Engine, poster: Peer, *, ttl: float = 3600) -> str:
    offer_id = f"o_{next(_ids)}"
    await db.write(
        lambda r: r.offers.insert(
            offer_id=offer_id,
            poster_id=poster.id,
            poster=poster.name,
            subject="help wanted",
            payload="port the parser",
            required_skills=[{"id": "rust", "name": "rust"}],
            now=NOW,
            expires_at=NOW + ttl,
        )
    )
    return offer_id


async def add_claim(db: Engine, offer_id: str, p: Peer) -> bool:
    return await db.write(lambda r: r.offers.add_claim(offer_id, p.id, p.name, None, NOW))


async def offer(db: Engine, offer_id: str) -> Offer:
    found = await db.read(lambda r: r.offers.get(offer_id))
    assert found is not None
    return found


# --- the repositories ------------------------------------------------------------------------
async def test_an_offer_is_stored_open_and_counted_against_its_poster(db: Engine) -> None:
    alice = await peer(db, "alice")
    offer_id = await stored_offer(db, alice)
    found = await offer(db, offer_id)
    assert (found.state, found.poster, found.required_skills[0]["id"]) == ("open", "alice", "rust")
    assert await db.read(lambda r: r.offers.open_count(alice.id, NOW)) == 1
    assert await db.read(lambda r: r.offers.open_count(alice.id, NOW + 7200)) == 0  # outlived
    listed = await db.read(lambda r: r.offers.in_state("open"))
    assert [o.id for o in listed] == [offer_id]


async def test_one_pending_claim_per_claimant_even_when_they_race(db: Engine) -> None:
    alice = await peer(db, "alice")
    claimants = [await peer(db, f"c{i}") for i in range(6)]
    offer_id = await stored_offer(db, alice)
    first = await asyncio.gather(*(add_claim(db, offer_id, c) for c in claimants * 2))
    assert sorted(first) == [False] * 6 + [True] * 6
    found = await offer(db, offer_id)
    assert sorted(c.claimant for c in found.claims) == sorted(c.name for c in claimants)


async def test_an_assignment_applies_only_to_an_open_offer(db: Engine) -> None:
    alice, bob, carol = [await peer(db, n) for n in ("alice", "bob", "carol")]
    offer_id = await stored_offer(db, alice)
    await add_claim(db, offer_id, bob)
    await add_claim(db, offer_id, carol)
    assert await db.write(lambda r: r.offers.assign(offer_id, "bob", "t_1", NOW))
    assert not await db.write(lambda r: r.offers.assign(offer_id, "carol", "t_2", NOW))
    found = await offer(db, offer_id)
    assert (found.state, found.winner, found.task_id) == ("assigned", "bob", "t_1")
    assert {c.claimant: c.state for c in found.claims} == {"bob": "selected", "carol": "rejected"}
    assigned = await db.read(lambda r: r.offers.assigned_from("t_1"))
    assert assigned is not None
    await db.write(lambda r: r.offers.reopen(assigned, OfferState.OPEN, NOW))
    back = await offer(db, offer_id)
    assert (back.state, back.winner, back.task_id) == ("open", None, None)
    assert {c.claimant: c.state for c in back.claims}["bob"] == "rejected"


async def test_expiry_ends_open_offers_past_their_time(db: Engine) -> None:
    alice = await peer(db, "alice")
    short = await stored_offer(db, alice, ttl=10)
    await stored_offer(db, alice)
    assert await db.write(lambda r: r.offers.expire(NOW + 11)) == 1
    assert (await offer(db, short)).state == "expired"
    assert await db.write(lambda r: r.offers.expire(NOW + 12)) == 0


# --- the rules above them, over each backend ------------------------------------------------
async def join(room: Hub, name: str) -> Peer:
    return (await room.principals.register(name=name)).peer


async def kinds(room: Hub, p: Peer) -> list[str]:
    return [d.message.kind for d in (await room.delivery.receive(p, wait=0)).deliveries]


async def test_an_offer_is_announced_and_opened_together(room: Hub) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    posted = await room.offers.post(alice, "port the parser", subject="help")
    assert (posted.state, posted.poster, posted.winner) == ("open", "alice", None)
    assert await kinds(room, bob) == ["announce"]
    assert [o.id for o in await room.offers.listing("open")] == [posted.id]


async def test_caps_refuse_the_offer_and_its_announcement_both(rooms: RoomFactory) -> None:
    room = await rooms(open_offers_max=1, announce_interval=60, announce_hourly=2)
    alice, bob = await join(room, "alice"), await join(room, "bob")
    await room.offers.post(alice, "one")
    room.clock.advance(100)  # type: ignore[attr-defined]
    with pytest.raises(CapOpenOffers):
        await room.offers.post(alice, "two")
    second = await rooms(announce_interval=60, announce_hourly=2)
    carol = await join(second, "carol")
    await second.offers.post(carol, "one")
    with pytest.raises(CapInterval):
        await second.offers.post(carol, "too soon")
    second.clock.advance(61)  # type: ignore[attr-defined]
    await second.offers.post(carol, "two")
    second.clock.advance(61)  # type: ignore[attr-defined]
    with pytest.raises(CapHourly):
        await second.offers.post(carol, "three in an hour")
    assert len(await room.offers.listing()) == 1
    assert await kinds(room, bob) == ["announce"]  # one announcement, not two


async def test_claims_one_per_claimant_never_ones_own(room: Hub) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    posted = await room.offers.post(alice, "work")
    with pytest.raises(Forbidden):
        await room.offers.claim(alice, posted.id)
    claimed = await room.offers.claim(bob, posted.id)
    assert [(c.claimant, c.state) for c in claimed.claims] == [("bob", "pending")]
    with pytest.raises(Conflict):
        await room.offers.claim(bob, posted.id)
    assert await kinds(room, alice) == ["offer_claim"]


async def test_selecting_gives_the_winner_a_task_and_tells_the_rest(room: Hub) -> None:
    alice, bob, carol = [await join(room, n) for n in ("alice", "bob", "carol")]
    posted = await room.offers.post(alice, "work")
    await room.offers.claim(bob, posted.id)
    await room.offers.claim(carol, posted.id)
    await kinds(room, bob)  # the announcements, out of the way
    await kinds(room, carol)
    with pytest.raises(Forbidden):
        await room.offers.resolve(bob, posted.id, select="bob")  # only the poster selects
    resolved = await room.offers.resolve(alice, posted.id, select="bob")
    assert (resolved.state, resolved.winner) == ("assigned", "bob")
    assert resolved.task_id is not None
    task = await room.tasks.status(bob, resolved.task_id)
    assert (task.worker, task.thread) == ("bob", posted.id)
    assert {c.claimant: c.state for c in resolved.claims} == {
        "bob": "selected",
        "carol": "rejected",
    }
    assert (await kinds(room, bob), await kinds(room, carol)) == (["task"], ["offer_not_selected"])
    with pytest.raises(Conflict):
        await room.offers.resolve(alice, posted.id, select="carol")  # assigned already


async def test_the_tasks_ending_settles_its_offer(room: Hub) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    done = await room.offers.post(alice, "first")
    await room.offers.claim(bob, done.id)
    won = await room.offers.resolve(alice, done.id, select="bob")
    assert won.task_id is not None
    await room.tasks.reply(bob, won.task_id, "finished")
    assert [o.state for o in await room.offers.listing()] == ["completed"]
    # A failed assignment re-opens the offer, for another claimant.
    again = await room.offers.post(alice, "second")
    await room.offers.claim(bob, again.id)
    second = await room.offers.resolve(alice, again.id, select="bob")
    assert second.task_id is not None
    await room.tasks.fail(bob, second.task_id, "could not")
    (reopened,) = await room.offers.listing("open")
    assert (reopened.id, reopened.winner, reopened.task_id) == (again.id, None, None)


async def test_withdrawal_tells_the_claimants_and_expiry_ends_the_open(room: Hub) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    withdrawn = await room.offers.post(alice, "maybe")
    await room.offers.claim(bob, withdrawn.id)
    await kinds(room, bob)
    gone = await room.offers.resolve(alice, withdrawn.id, withdraw=True)
    assert gone.state == "withdrawn"
    assert await kinds(room, bob) == ["offer_withdrawn"]
    stale = await room.offers.post(alice, "soon gone", ttl_seconds=60)
    room.clock.advance(61)  # type: ignore[attr-defined]
    await room.offers.sweep()
    assert [o.id for o in await room.offers.listing("expired")] == [stale.id]


async def test_an_unknown_offer_is_not_found(room: Hub) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    with pytest.raises(NotFound):
        await room.offers.claim(bob, "o_ghost")
    with pytest.raises(NotFound):
        await room.offers.resolve(alice, "o_ghost", withdraw=True)


async def test_announcements_are_capped_per_sender_and_caught_up_by_newcomers(
    rooms: RoomFactory,
) -> None:
    room = await rooms(announce_interval=30, announce_hourly=2, announce_catch_up=3650)
    alice, bob = await join(room, "alice"), await join(room, "bob")
    clock = room.clock
    await room.announcements.announce(alice, "one")
    clock.advance(10)  # type: ignore[attr-defined]
    with pytest.raises(CapInterval):
        await room.announcements.announce(alice, "too soon")
    await room.announcements.announce(bob, "bob's")  # the interval is per sender
    clock.advance(30)  # type: ignore[attr-defined]
    await room.announcements.announce(alice, "two")
    clock.advance(40)  # type: ignore[attr-defined]
    with pytest.raises(CapHourly):
        await room.announcements.announce(alice, "three in an hour")
    clock.advance(3600)  # type: ignore[attr-defined]
    await room.announcements.announce(alice, "an hour later")
    # A newcomer catches up on what was announced in the catch-up window.
    carol = await join(room, "carol")
    caught = [d.message.content for d in (await room.delivery.receive(carol, wait=0)).deliveries]
    assert caught == ["two", "an hour later"]
