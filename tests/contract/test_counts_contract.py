"""What each agent sent (issue 53), on each backend: the console's count is kept as the log
grows (a follower the maintenance round runs) plus what was stored since, never counted over
the whole log; it is the same before and after the follower runs, and what retention drops
stays counted."""

from __future__ import annotations

from caucus.services.hub import Hub
from tests.contract.conftest import RoomFactory


async def test_sent_counts_follow_the_log_and_outlive_retention(rooms: RoomFactory) -> None:
    room: Hub = await rooms(retention_age=60.0)
    alice = (await room.principals.register(name="alice")).peer
    bob = (await room.principals.register(name="bob")).peer
    for n in range(3):
        await room.delivery.send(alice, to="bob", content=f"a{n}")
    await room.delivery.send(bob, to="all", content="b0")
    assert await room.history.sent_by() == {"alice": 3, "bob": 1}  # all of it stored since
    assert await room.history.count_more() >= 4
    assert await room.history.sent_by() == {"alice": 3, "bob": 1}  # all of it counted
    await room.delivery.send(alice, to="bob", content="a3")
    assert await room.history.sent_by() == {"alice": 4, "bob": 1}  # counted, and one since
    for peer in (alice, bob):
        while got := (await room.delivery.receive(peer, wait=0, limit=100)).deliveries:
            await room.delivery.ack(peer, through=got[-1].message.seq)
    await room.history.count_more()
    room.clock.advance(3600)  # type: ignore[attr-defined]
    assert (await room.retention.sweep()).messages == 5
    assert await room.history.sent_by() == {"alice": 4, "bob": 1}
