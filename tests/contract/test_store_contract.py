"""The storage contract: what every Store backend must do, run against each of them."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from caucus.domain.messages import NewMessage
from caucus.domain.names import parse_target
from caucus.domain.peers import Peer, PeerState
from caucus.errors import InvalidRequest, NameInUse, NotFound
from caucus.ids import hash_token, new_token
from caucus.storage.base import Store

NOW = 1_000_000.0
_ids = itertools.count(1)


async def peer(store: Store, name: str, now: float = NOW) -> Peer:
    return await store.create_peer(
        name=name, token_hash=hash_token(new_token()), skills=[], description="", now=now
    )


async def send(
    store: Store,
    sender: Peer,
    to: str,
    content: str = "hi",
    *,
    key: str | None = None,
    reply_to: str | None = None,
    ts: float = NOW,
):  # type: ignore[no-untyped-def]
    msg = NewMessage(
        id=f"m_{next(_ids)}",
        ts=ts,
        sender_id=sender.id,
        sender=sender.name,
        to=to,
        kind="chat",
        content=content,
        idempotency_key=key,
        reply_to=reply_to,
    )
    return await store.append_message(msg, parse_target(to), idempotency_since=ts - 86400)


async def claim(
    store: Store,
    p: Peer,
    *,
    now: float = NOW,
    ack: int | None = None,
    limit: int = 100,
    visibility: float = 60,
):  # type: ignore[no-untyped-def]
    return await store.claim(p.id, now=now, visibility=visibility, limit=limit, ack_through=ack)


async def test_an_active_name_is_unique(store: Store) -> None:
    await peer(store, "alice")
    with pytest.raises(NameInUse):
        await peer(store, "alice")


async def test_peers_are_found_by_token_and_by_active_name(store: Store) -> None:
    token = new_token()
    created = await store.create_peer(
        name="alice",
        token_hash=hash_token(token),
        skills=[{"id": "py", "name": "py"}],
        description="d",
        now=NOW,
    )
    by_token = await store.peer_by_token(hash_token(token))
    assert by_token is not None
    assert by_token.id == created.id
    assert by_token.skills == [{"id": "py", "name": "py"}]
    assert (await store.peer_by_name("alice")) is not None
    assert await store.peer_by_token(hash_token("nope")) is None


async def test_seq_is_global_and_increasing(store: Store) -> None:
    a, b = await peer(store, "a"), await peer(store, "b")
    seqs = [(await send(store, a, "b")).receipt.seq for _ in range(5)]
    seqs += [(await send(store, b, "a")).receipt.seq for _ in range(5)]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == 10


async def test_direct_broadcast_and_channel_audiences(store: Store) -> None:
    a, b, c = await peer(store, "a"), await peer(store, "b"), await peer(store, "c")
    assert (await send(store, a, "b")).receipt.delivered_to == ["b"]
    assert (await send(store, a, "all")).receipt.delivered_to == ["b", "c"]
    await store.join_channel(c.id, "#dev", NOW)
    out = await send(store, a, "#dev")
    assert out.receipt.delivered_to == ["c"]
    assert out.joined_channel  # the sender joined by sending
    assert (await store.get_channel("#dev")).members == ["a", "c"]  # type: ignore[union-attr]
    assert (await store.peek(b.id)).pending == 2
    assert (await store.peek(c.id)).pending == 2


async def test_unknown_recipient_and_self_are_refused(store: Store) -> None:
    a = await peer(store, "a")
    with pytest.raises(NotFound):
        await send(store, a, "ghost")
    with pytest.raises(InvalidRequest):
        await send(store, a, "a")
    assert await store.messages_after(0, 10) == []


async def test_reply_to_threads_the_answer_under_the_question(store: Store) -> None:
    a, b = await peer(store, "a"), await peer(store, "b")
    q = await send(store, a, "b", "question")
    answer = await send(store, b, "a", "answer", reply_to=q.message.id)
    assert answer.message.thread == q.message.id
    with pytest.raises(NotFound):
        await send(store, b, "a", "x", reply_to="m_unknown")


async def test_an_idempotency_key_replays_the_first_result(store: Store) -> None:
    a, b = await peer(store, "a"), await peer(store, "b")
    first = await send(store, a, "b", "once", key="k1")
    again = await send(store, a, "b", "once", key="k1")
    assert again.receipt.duplicate
    assert again.receipt.seq == first.receipt.seq
    assert again.receipt.delivered_to == ["b"]
    assert (await store.peek(b.id)).pending == 1
    other = await send(store, b, "a", "same key, other sender", key="k1")
    assert not other.receipt.duplicate


async def test_an_expired_idempotency_key_no_longer_deduplicates(store: Store) -> None:
    a, _ = await peer(store, "a"), await peer(store, "b")
    await send(store, a, "b", "once", key="k", ts=NOW)
    later = await send(store, a, "b", "again", key="k", ts=NOW + 90_000)
    assert not later.receipt.duplicate


async def test_claims_hand_out_in_seq_order_and_hide_what_they_handed_out(store: Store) -> None:
    a, b = await peer(store, "a"), await peer(store, "b")
    for i in range(5):
        await send(store, a, "b", f"m{i}")
    first = await claim(store, b, limit=3)
    assert [d.message.content for d in first.deliveries] == ["m0", "m1", "m2"]
    second = await claim(store, b)
    assert [d.message.content for d in second.deliveries] == ["m3", "m4"]
    third = await claim(store, b)
    assert third.deliveries == []
    assert third.next_visible_at == pytest.approx(NOW + 60)


async def test_unacknowledged_deliveries_come_back_after_the_visibility_timeout(
    store: Store,
) -> None:
    a, b = await peer(store, "a"), await peer(store, "b")
    await send(store, a, "b", "hello")
    got = await claim(store, b)
    assert got.deliveries[0].delivery_count == 1
    assert (await claim(store, b, now=NOW + 59)).deliveries == []
    again = await claim(store, b, now=NOW + 61)
    assert [d.message.content for d in again.deliveries] == ["hello"]
    assert again.deliveries[0].redelivered
    assert again.deliveries[0].delivery_count == 2


async def test_a_cursor_ack_covers_only_the_batch_that_held_it(store: Store) -> None:
    a, b = await peer(store, "a"), await peer(store, "b")
    for i in range(4):
        await send(store, a, "b", f"m{i}")
    lost = await claim(store, b, limit=2)  # pretend this response never arrived
    seen = await claim(store, b, limit=2)
    through = seen.deliveries[-1].message.seq
    assert (await claim(store, b, ack=through)).acked == 2
    # The lost batch is still owed and returns after its timeout.
    back = await claim(store, b, now=NOW + 61)
    assert [d.message.seq for d in back.deliveries] == [d.message.seq for d in lost.deliveries]


async def test_acks_never_cover_what_was_not_handed_out(store: Store) -> None:
    a, b = await peer(store, "a"), await peer(store, "b")
    first = await send(store, a, "b", "one")
    assert await store.ack(b.id, seqs=[first.receipt.seq]) == 0
    assert await store.ack(b.id, through=first.receipt.seq) == 0
    await claim(store, b)
    assert await store.ack(b.id, seqs=[first.receipt.seq]) == 1
    assert (await store.peek(b.id)).pending == 0


async def test_releasing_in_flight_deliveries_makes_them_visible_now(store: Store) -> None:
    a, b = await peer(store, "a"), await peer(store, "b")
    await send(store, a, "b", "x")
    await claim(store, b)
    assert await store.release_inflight(b.id, NOW) == 1
    again = await claim(store, b)
    assert again.deliveries[0].redelivered


async def test_peek_counts_pending_and_shows_the_latest(store: Store) -> None:
    a, b = await peer(store, "a"), await peer(store, "b")
    assert (await store.peek(b.id)).last is None
    await send(store, a, "b", "first")
    await send(store, a, "b", "second")
    peeked = await store.peek(b.id)
    assert peeked.pending == 2
    assert peeked.last is not None
    assert peeked.last.content == "second"
    assert len((await claim(store, b)).deliveries) == 2  # peeking consumed nothing


async def test_a_reaped_peer_keeps_its_name_until_it_ends(store: Store) -> None:
    a = await peer(store, "a", now=NOW - 400)
    reaped = await store.reap_peers(NOW - 300, NOW, exclude=[])
    assert [p.name for p in reaped] == ["a"]
    held = await store.peer_by_name("a")
    assert held is not None
    assert (held.id, held.state) == (a.id, PeerState.REAPED)
    with pytest.raises(NameInUse):
        await peer(store, "a")
    await store.revive_peer(a.id, NOW)
    revived = await store.peer_by_name("a")
    assert revived is not None
    assert (revived.id, revived.state) == (a.id, PeerState.ACTIVE)
    await store.end_peer(a.id, PeerState.LEFT, NOW)
    assert await store.peer_by_name("a") is None
    assert (await peer(store, "a")).id != a.id  # freed by the end


async def test_going_offline_reaps_at_once_and_marks_it(store: Store) -> None:
    a = await peer(store, "a")
    assert await store.set_offline(a.id, NOW + 1)
    assert not await store.set_offline(a.id, NOW + 2)  # once
    away = await store.peer_by_name("a")
    assert away is not None
    assert (away.state, away.offline_at, away.reaped_at) == (PeerState.REAPED, NOW + 1, NOW + 1)
    await store.revive_peer(a.id, NOW + 3)
    back = await store.peer_by_name("a")
    assert back is not None
    assert (back.state, back.offline_at) == (PeerState.ACTIVE, None)


async def test_a_state_handle_stands_for_its_peer_until_the_peer_ends(store: Store) -> None:
    a = await peer(store, "a")
    for n in range(5):
        await store.create_handle(a.id, f"h{n}".encode(), NOW + n, keep=3)
    found = await store.peer_by_handle(b"h4")
    assert found is not None
    assert found.id == a.id
    assert await store.peer_by_handle(b"h0") is None  # only the newest three are kept
    await store.end_peer(a.id, PeerState.KICKED, NOW)
    assert await store.peer_by_handle(b"h4") is None


async def test_listening_peers_are_not_reaped(store: Store) -> None:
    a = await peer(store, "a", now=NOW - 400)
    assert await store.reap_peers(NOW - 300, NOW, exclude=[a.id]) == []


async def test_a_reaped_peer_keeps_receiving_and_counts_as_missed(store: Store) -> None:
    a, b = await peer(store, "a"), await peer(store, "b", now=NOW - 400)
    await store.reap_peers(NOW - 300, NOW, exclude=[a.id])
    out = await send(store, a, "b", "while you were away")
    assert out.receipt.delivered_to == ["b"]
    assert out.receipt.missed == ["b"]
    assert (await store.peek(b.id)).pending == 1


async def test_forgetting_ends_reaped_peers_past_their_grace(store: Store) -> None:
    a, b = await peer(store, "a"), await peer(store, "b", now=NOW - 400)
    await store.reap_peers(NOW - 300, NOW, exclude=[a.id])
    await send(store, a, "b", "lost cause")
    assert await store.forget_peers(NOW - 1800, NOW) == []
    gone = await store.forget_peers(NOW + 2000 - 1800, NOW + 2000)
    assert [p.name for p in gone] == ["b"]
    assert (await store.peek(b.id)).pending == 0
    with pytest.raises(NotFound):
        await send(store, a, "b")


async def test_ending_a_peer_drops_its_inbox_and_memberships(store: Store) -> None:
    a, b = await peer(store, "a"), await peer(store, "b")
    await store.join_channel(b.id, "#x", NOW)
    await send(store, a, "b")
    await store.end_peer(b.id, PeerState.LEFT, NOW)
    assert (await store.peek(b.id)).pending == 0
    assert await store.peer_channels(b.id) == []
    (found,) = await store.list_peers([PeerState.LEFT])
    assert found.name == "b"


async def test_channel_membership_and_topics(store: Store) -> None:
    a = await peer(store, "a")
    assert await store.join_channel(a.id, "#x", NOW)
    assert not await store.join_channel(a.id, "#x", NOW)
    await store.set_topic("#x", "release", "a", NOW)
    (channel,) = await store.list_channels()
    assert (channel.name, channel.topic, channel.topic_by, channel.members) == (
        "#x",
        "release",
        "a",
        ["a"],
    )
    assert await store.peer_channels(a.id) == ["#x"]
    assert await store.leave_channel(a.id, "#x")
    assert not await store.leave_channel(a.id, "#x")


async def test_last_seen_only_moves_forward(store: Store) -> None:
    a = await peer(store, "a")
    await store.touch_peers({a.id: NOW + 10})
    await store.touch_peers({a.id: NOW + 5})
    found = await store.peer_by_name("a")
    assert found is not None
    assert found.last_seen == NOW + 10


async def test_a_rename_onto_an_active_name_is_refused(store: Store) -> None:
    a, _ = await peer(store, "a"), await peer(store, "b")
    with pytest.raises(NameInUse):
        await store.update_peer(a.id, {"name": "b"})


async def test_one_failing_operation_does_not_undo_concurrent_ones(store: Store) -> None:
    a, b = await peer(store, "a"), await peer(store, "b")
    results = await asyncio.gather(
        *[send(store, a, "b", f"ok{i}") for i in range(20)],
        send(store, a, "ghost"),
        return_exceptions=True,
    )
    assert sum(isinstance(r, NotFound) for r in results) == 1
    assert (await store.peek(b.id)).pending == 20


async def test_a_direct_message_reaches_whoever_holds_the_name_now(store: Store) -> None:
    a, first = await peer(store, "a"), await peer(store, "b")
    await send(store, a, "b", "to the first b")
    await store.end_peer(first.id, PeerState.LEFT, NOW)
    second = await peer(store, "b")
    await send(store, a, "b", "to the second b")
    assert (await store.peek(second.id)).pending == 1
    await store.update_peer(second.id, {"name": "b2"})
    with pytest.raises(NotFound):
        await send(store, a, "b")
    assert (await send(store, a, "b2")).receipt.delivered_to == ["b2"]
    await store.reap_peers(NOW + 1, NOW + 1, exclude=[a.id])
    assert (await send(store, a, "b2")).receipt.missed == ["b2"]
