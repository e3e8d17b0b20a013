"""The job board: post, claim, select or withdraw, and how the assignment settles the offer."""

from __future__ import annotations

import asyncio

import pytest

from caucus.domain.peers import Peer
from caucus.errors import CapInterval, CapOpenOffers, Conflict, Forbidden, NotFound
from caucus.services.hub import Hub
from caucus.testing import FakeClock
from tests.interaction.test_announcements import rows


async def peers(hub: Hub, *names: str) -> list[Peer]:
    return [(await hub.principals.register(name=n)).peer for n in names]


async def kinds(hub: Hub, peer: Peer) -> list[str]:
    got = (await hub.delivery.receive(peer, wait=0)).deliveries
    if got:
        await hub.delivery.ack(peer, seqs=[d.message.seq for d in got])
    return [d.message.kind for d in got]


async def test_post_claim_select_and_complete(hub: Hub) -> None:
    poster, ann, ben = await peers(hub, "poster", "ann", "ben")
    offer = await hub.offers.post(
        poster, "port the parser", subject="parser", required_skills=["rust"]
    )
    assert (offer.state, offer.required_skills) == ("open", [{"id": "rust", "name": "rust"}])
    assert await kinds(hub, ann) == ["announce"]  # the board announces it
    await kinds(hub, ben)
    await hub.offers.claim(ann, offer.id, "I know nom")
    await hub.offers.claim(ben, offer.id)
    assert await kinds(hub, poster) == ["offer_claim", "offer_claim"]
    with pytest.raises(Conflict):
        await hub.offers.claim(ann, offer.id)  # one pending claim each
    with pytest.raises(Forbidden):
        await hub.offers.claim(poster, offer.id)  # not on one's own offer
    assigned = await hub.offers.resolve(poster, offer.id, select="ann")
    assert (assigned.state, assigned.winner) == ("assigned", "ann")
    got = (await hub.delivery.receive(ann, wait=0)).deliveries
    assert [d.message.kind for d in got] == ["task"]
    assert got[0].message.thread == offer.id  # threaded under the offer
    assert await kinds(hub, ben) == ["offer_not_selected"]
    assert assigned.task_id is not None
    await hub.tasks.reply(ann, assigned.task_id, "ported")
    (done,) = await hub.offers.listing("completed")
    assert done.id == offer.id
    assert [c.state for c in done.claims] == ["selected", "rejected"]


async def test_a_failed_assignment_reopens_the_offer(hub: Hub) -> None:
    poster, ann, ben = await peers(hub, "poster", "ann", "ben")
    offer = await hub.offers.post(poster, "flaky job")
    await hub.offers.claim(ann, offer.id)
    assigned = await hub.offers.resolve(poster, offer.id, select="ann")
    await kinds(hub, ann)
    assert assigned.task_id is not None
    await hub.tasks.fail(ann, assigned.task_id, "gave up")
    (reopened,) = await hub.offers.listing("open")
    assert (reopened.id, reopened.winner) == (offer.id, None)
    await hub.offers.claim(ben, offer.id)  # others may claim it again
    await hub.offers.claim(ann, offer.id)  # and so may the one who failed, anew


async def test_withdraw_tells_every_claimant(hub: Hub) -> None:
    poster, ann, ben = await peers(hub, "poster", "ann", "ben")
    offer = await hub.offers.post(poster, "maybe later")
    await hub.offers.claim(ann, offer.id)
    await hub.offers.claim(ben, offer.id)
    await kinds(hub, ann)
    await kinds(hub, ben)
    with pytest.raises(Forbidden):
        await hub.offers.resolve(ann, offer.id, withdraw=True)  # only the poster
    assert (await hub.offers.resolve(poster, offer.id, withdraw=True)).state == "withdrawn"
    assert await kinds(hub, ann) == ["offer_withdrawn"]
    assert await kinds(hub, ben) == ["offer_withdrawn"]
    with pytest.raises(Conflict):
        await hub.offers.claim(ann, offer.id)
    with pytest.raises(NotFound):
        await hub.offers.claim(ann, "o_nothing")


async def test_racing_resolutions_have_one_winner(hub: Hub) -> None:
    poster, ann, ben = await peers(hub, "poster", "ann", "ben")
    offer = await hub.offers.post(poster, "contested")
    await hub.offers.claim(ann, offer.id)
    await hub.offers.claim(ben, offer.id)
    results = await asyncio.gather(
        hub.offers.resolve(poster, offer.id, select="ann"),
        hub.offers.resolve(poster, offer.id, select="ben"),
        return_exceptions=True,
    )
    assert sum(isinstance(r, Conflict) for r in results) == 1
    assert rows(hub, "tasks") == 1


async def test_posting_shares_the_announcement_caps_and_stores_nothing_when_refused(
    hub: Hub, clock: FakeClock
) -> None:
    (poster,) = await peers(hub, "poster")
    await hub.announcements.announce(poster, "news")
    with pytest.raises(CapInterval):
        await hub.offers.post(poster, "too soon after my announcement")
    assert rows(hub, "offers") == 0
    for i in range(5):
        clock.advance(31)
        await hub.offers.post(poster, f"job {i}")
    clock.advance(31)
    with pytest.raises(CapOpenOffers) as caught:
        await hub.offers.post(poster, "a sixth")
    assert caught.value.code == "cap_open_offers"
    assert rows(hub, "offers") == 5
    assert rows(hub, "announcements") == 6


async def test_open_offers_expire_at_their_clamped_ttl(hub: Hub, clock: FakeClock) -> None:
    (poster,) = await peers(hub, "poster")
    offer = await hub.offers.post(poster, "quick one", ttl_seconds=1)  # clamped up to 60 s
    assert offer.expires_at - offer.created_at == 60
    clock.advance(59)
    await hub.maintain()
    assert [o.state for o in await hub.offers.listing()] == ["open"]
    clock.advance(2)
    await hub.maintain()
    assert [o.state for o in await hub.offers.listing()] == ["expired"]


async def test_a_claimant_racing_itself_gets_one_claim_and_a_409(hub: Hub) -> None:
    poster, ann = await peers(hub, "poster", "ann")
    offer = await hub.offers.post(poster, "one claim each")
    results = await asyncio.gather(
        hub.offers.claim(ann, offer.id),
        hub.offers.claim(ann, offer.id),
        return_exceptions=True,
    )
    assert sum(isinstance(r, Conflict) for r in results) == 1
    assert rows(hub, "offer_claims") == 1


async def test_workers_find_offers_that_match_their_skills(hub: Hub) -> None:
    (poster,) = await peers(hub, "poster")
    rustacean = (await hub.principals.register(name="rusty", skills=["rust", "sql"])).peer
    await hub.offers.post(poster, "rust job", required_skills=["rust"])
    hub.clock.advance(31)  # type: ignore[attr-defined]
    await hub.offers.post(poster, "go job", required_skills=[{"id": "go", "name": "Go"}])
    mine = await hub.offers.listing("open", matching=rustacean)
    assert [o.payload for o in mine] == ["rust job"]
