"""The storage contract: what every backend's repositories do (peers, the inbox, channels,
idempotency), through its engine's units of work, run against each backend."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from caucus.domain.messages import AppendOutcome, ClaimResult, NewMessage
from caucus.domain.names import parse_target
from caucus.domain.peers import Peer, PeerState
from caucus.errors import InvalidRequest, NameInUse, NotFound
from caucus.ids import hash_token, new_token
from caucus.services.channels import join_channel
from caucus.services.registry import end_peer, forget_expired
from caucus.storage.engine import Engine
from tests.contract.conftest import NOW

_ids = itertools.count(1)


async def peer(db: Engine, name: str, now: float = NOW) -> Peer:
    digest = hash_token(new_token())
    return await db.write(
        lambda r: r.peers.create(name=name, token_hash=digest, skills=[], description="", now=now)
    )


async def send(
    db: Engine,
    sender: Peer,
    to: str,
    content: str = "hi",
    *,
    key: str | None = None,
    reply_to: str | None = None,
    ts: float = NOW,
) -> AppendOutcome:
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
    return await db.write(lambda r: r.inbox.append(msg, parse_target(to), ts - 86400))


async def claim(
    db: Engine,
    p: Peer,
    *,
    now: float = NOW,
    ack: int | None = None,
    limit: int = 100,
    visibility: float = 60,
) -> ClaimResult:
    return await db.write(
        lambda r: r.inbox.claim(p.id, now=now, visibility=visibility, limit=limit, ack_through=ack)
    )


async def peek(db: Engine, p: Peer) -> Any:
    return await db.read(lambda r: r.inbox.peek(p.id))


async def holder(db: Engine, name: str) -> Peer | None:
    return await db.read(lambda r: r.peers.holder(name))


async def reap(db: Engine, idle_before: float, now: float, exclude: set[int]) -> list[Peer]:
    return await db.write(lambda r: r.peers.reap_idle(idle_before, now, exclude))


async def end(db: Engine, p: Peer, state: PeerState, now: float = NOW) -> None:
    await db.write(lambda r: end_peer(r, p.id, state, now))


async def join(db: Engine, p: Peer, channel: str) -> bool:
    return await db.write(lambda r: join_channel(r, p.id, channel, NOW, None)[1])


async def test_an_active_name_is_unique(db: Engine) -> None:
    await peer(db, "alice")
    with pytest.raises(NameInUse):
        await peer(db, "alice")


async def test_peers_are_found_by_token_and_by_active_name(db: Engine) -> None:
    token = new_token()
    digest = hash_token(token)
    created = await db.write(
        lambda r: r.peers.create(
            name="alice",
            token_hash=digest,
            skills=[{"id": "py", "name": "py"}],
            description="d",
            now=NOW,
        )
    )
    by_token = await db.read(lambda r: r.peers.by_token(digest))
    assert by_token is not None
    assert by_token.id == created.id
    assert by_token.skills == [{"id": "py", "name": "py"}]
    assert (await holder(db, "alice")) is not None
    nope = hash_token("nope")
    assert await db.read(lambda r: r.peers.by_token(nope)) is None


async def test_seq_is_global_and_increasing(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    seqs = [(await send(db, a, "b")).receipt.seq for _ in range(5)]
    seqs += [(await send(db, b, "a")).receipt.seq for _ in range(5)]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == 10


async def test_direct_broadcast_and_channel_audiences(db: Engine) -> None:
    a, b, c = await peer(db, "a"), await peer(db, "b"), await peer(db, "c")
    assert (await send(db, a, "b")).receipt.delivered_to == ["b"]
    assert (await send(db, a, "all")).receipt.delivered_to == ["b", "c"]
    await join(db, c, "#dev")
    out = await send(db, a, "#dev")
    assert out.receipt.delivered_to == ["c"]
    assert out.joined_channel  # the sender joined by sending
    assert (await db.read(lambda r: r.channels.get("#dev"))).members == ["a", "c"]  # type: ignore[union-attr]
    assert (await peek(db, b)).pending == 2
    assert (await peek(db, c)).pending == 2


async def test_unknown_recipient_and_self_are_refused(db: Engine) -> None:
    a = await peer(db, "a")
    with pytest.raises(NotFound):
        await send(db, a, "ghost")
    with pytest.raises(InvalidRequest):
        await send(db, a, "a")
    assert await db.read(lambda r: r.messages.after(0, 10)) == []


async def test_reply_to_threads_the_answer_under_the_question(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    q = await send(db, a, "b", "question")
    answer = await send(db, b, "a", "answer", reply_to=q.message.id)
    assert answer.message.thread == q.message.id
    assert (answer.message.reply_seq, answer.message.reply_sender) == (q.message.seq, "a")
    with pytest.raises(NotFound):
        await send(db, b, "a", "x", reply_to="m_unknown")


@pytest.mark.parametrize("form", ["#{}", "{}", " #{} "])
async def test_reply_to_takes_the_number_a_model_sees(db: Engine, form: str) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    q = await send(db, a, "b", "question")
    answer = await send(db, b, "a", "answer", reply_to=form.format(q.message.seq))
    assert answer.message.reply_to == q.message.id  # stored as the id, whatever form came
    assert answer.message.thread == q.message.id
    (got,) = (await claim(db, a)).deliveries  # as stored (PostgreSQL dropped reply_to here)
    assert got.message.reply_to == q.message.id
    assert (got.message.reply_seq, got.message.reply_sender) == (q.message.seq, "a")


async def test_a_reply_cannot_answer_a_message_its_sender_may_not_read(db: Engine) -> None:
    a, c = await peer(db, "a"), await peer(db, "c")
    await peer(db, "b")
    secret = await send(db, a, "b", "between a and b")
    refusals = []
    for ref in (secret.message.id, str(secret.message.seq), f"#{secret.message.seq}", "#99999"):
        with pytest.raises(NotFound) as refused:
            await send(db, c, "a", "re your secret", reply_to=ref)
        assert "#22 or 22" in str(refused.value)  # it says which forms are taken
        refusals.append(str(refused.value).replace(ref, "REF"))
    assert len(set(refusals)) == 1  # no message and one c may not read are refused alike


async def test_an_idempotency_key_replays_the_first_result(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    first = await send(db, a, "b", "once", key="k1")
    again = await send(db, a, "b", "once", key="k1")
    assert again.receipt.duplicate
    assert again.receipt.seq == first.receipt.seq
    assert again.receipt.delivered_to == ["b"]
    assert (await peek(db, b)).pending == 1
    other = await send(db, b, "a", "same key, other sender", key="k1")
    assert not other.receipt.duplicate


async def test_an_expired_idempotency_key_no_longer_deduplicates(db: Engine) -> None:
    a, _ = await peer(db, "a"), await peer(db, "b")
    await send(db, a, "b", "once", key="k", ts=NOW)
    later = await send(db, a, "b", "again", key="k", ts=NOW + 90_000)
    assert not later.receipt.duplicate


async def test_claims_hand_out_in_seq_order_and_hide_what_they_handed_out(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    for i in range(5):
        await send(db, a, "b", f"m{i}")
    first = await claim(db, b, limit=3)
    assert [d.message.content for d in first.deliveries] == ["m0", "m1", "m2"]
    second = await claim(db, b)
    assert [d.message.content for d in second.deliveries] == ["m3", "m4"]
    third = await claim(db, b)
    assert third.deliveries == []
    assert third.next_visible_at == pytest.approx(NOW + 60)


async def test_unacknowledged_deliveries_come_back_after_the_visibility_timeout(
    db: Engine,
) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    await send(db, a, "b", "hello")
    got = await claim(db, b)
    assert got.deliveries[0].delivery_count == 1
    assert (await claim(db, b, now=NOW + 59)).deliveries == []
    again = await claim(db, b, now=NOW + 61)
    assert [d.message.content for d in again.deliveries] == ["hello"]
    assert again.deliveries[0].redelivered
    assert again.deliveries[0].delivery_count == 2


async def test_a_cursor_ack_covers_only_the_batch_that_held_it(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    for i in range(4):
        await send(db, a, "b", f"m{i}")
    lost = await claim(db, b, limit=2)  # pretend this response never arrived
    seen = await claim(db, b, limit=2)
    through = seen.deliveries[-1].message.seq
    assert (await claim(db, b, ack=through)).acked == 2
    # The lost batch is still owed and returns after its timeout.
    back = await claim(db, b, now=NOW + 61)
    assert [d.message.seq for d in back.deliveries] == [d.message.seq for d in lost.deliveries]


async def test_acks_never_cover_what_was_not_handed_out(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    first = await send(db, a, "b", "one")
    seq = first.receipt.seq
    assert await db.write(lambda r: r.inbox.ack(b.id, seqs=[seq])) == 0
    assert await db.write(lambda r: r.inbox.ack(b.id, through=seq)) == 0
    await claim(db, b)
    assert await db.write(lambda r: r.inbox.ack(b.id, seqs=[seq])) == 1
    assert (await peek(db, b)).pending == 0


async def test_releasing_in_flight_deliveries_makes_them_visible_now(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    await send(db, a, "b", "x")
    await claim(db, b)
    assert await db.write(lambda r: r.inbox.release(b.id, NOW)) == 1
    again = await claim(db, b)
    assert again.deliveries[0].redelivered


async def test_peek_counts_pending_and_shows_the_latest(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    assert (await peek(db, b)).last is None
    await send(db, a, "b", "first")
    await send(db, a, "b", "second")
    peeked = await peek(db, b)
    assert peeked.pending == 2
    assert peeked.last is not None
    assert peeked.last.content == "second"
    assert len((await claim(db, b)).deliveries) == 2  # peeking consumed nothing


async def test_a_reaped_peer_keeps_its_name_until_it_ends(db: Engine) -> None:
    a = await peer(db, "a", now=NOW - 400)
    reaped = await reap(db, NOW - 300, NOW, set())
    assert [p.name for p in reaped] == ["a"]
    held = await holder(db, "a")
    assert held is not None
    assert (held.id, held.state) == (a.id, PeerState.REAPED)
    with pytest.raises(NameInUse):
        await peer(db, "a")
    await db.write(lambda r: r.peers.revive(a.id, NOW))
    revived = await holder(db, "a")
    assert revived is not None
    assert (revived.id, revived.state) == (a.id, PeerState.ACTIVE)
    await end(db, a, PeerState.LEFT)
    assert await holder(db, "a") is None
    assert (await peer(db, "a")).id != a.id  # freed by the end


async def test_going_offline_reaps_at_once_and_marks_it(db: Engine) -> None:
    a = await peer(db, "a")
    assert await db.write(lambda r: r.peers.set_offline(a.id, NOW + 1))
    assert not await db.write(lambda r: r.peers.set_offline(a.id, NOW + 2))  # once
    away = await holder(db, "a")
    assert away is not None
    assert (away.state, away.offline_at, away.reaped_at) == (PeerState.REAPED, NOW + 1, NOW + 1)
    await db.write(lambda r: r.peers.revive(a.id, NOW + 3))
    back = await holder(db, "a")
    assert back is not None
    assert (back.state, back.offline_at) == (PeerState.ACTIVE, None)


async def test_a_state_handle_stands_for_its_peer_until_the_peer_ends(db: Engine) -> None:
    a = await peer(db, "a")
    for n in range(5):
        handle = f"h{n}".encode()
        await db.write(lambda r: r.peers.add_handle(a.id, handle, NOW + n, 3))  # noqa: B023
    found = await db.read(lambda r: r.peers.by_handle(b"h4"))
    assert found is not None
    assert found.id == a.id
    assert await db.read(lambda r: r.peers.by_handle(b"h0")) is None  # the newest three kept
    await end(db, a, PeerState.KICKED)
    assert await db.read(lambda r: r.peers.by_handle(b"h4")) is None


async def test_listening_peers_are_not_reaped(db: Engine) -> None:
    a = await peer(db, "a", now=NOW - 400)
    assert await reap(db, NOW - 300, NOW, {a.id}) == []


async def test_a_reaped_peer_keeps_receiving_and_counts_as_missed(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b", now=NOW - 400)
    await reap(db, NOW - 300, NOW, {a.id})
    out = await send(db, a, "b", "while you were away")
    assert out.receipt.delivered_to == ["b"]
    assert out.receipt.missed == ["b"]
    assert (await peek(db, b)).pending == 1


async def test_forgetting_ends_reaped_peers_past_their_grace(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b", now=NOW - 400)
    await reap(db, NOW - 300, NOW, {a.id})
    await send(db, a, "b", "lost cause")
    assert await db.write(lambda r: forget_expired(r, NOW - 1800, NOW)) == []
    gone = await db.write(lambda r: forget_expired(r, NOW + 2000 - 1800, NOW + 2000))
    assert [p.name for p in gone] == ["b"]
    assert (await peek(db, b)).pending == 0
    with pytest.raises(NotFound):
        await send(db, a, "b")


async def test_ending_a_peer_drops_its_inbox_and_memberships(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    await join(db, b, "#x")
    await send(db, a, "b")
    await end(db, b, PeerState.LEFT)
    assert (await peek(db, b)).pending == 0
    assert await db.read(lambda r: r.channels.of_peer(b.id)) == []
    (found,) = await db.read(lambda r: r.peers.in_states([PeerState.LEFT]))
    assert found.name == "b"


async def test_channel_membership_and_topics(db: Engine) -> None:
    a = await peer(db, "a")
    assert await join(db, a, "#x")
    assert not await join(db, a, "#x")
    await db.write(lambda r: r.channels.set_topic("#x", "release", "a", NOW))
    (channel,) = await db.read(lambda r: r.channels.all())
    assert (channel.name, channel.topic, channel.topic_by, channel.members) == (
        "#x",
        "release",
        "a",
        ["a"],
    )
    assert await db.read(lambda r: r.channels.of_peer(a.id)) == ["#x"]
    assert await db.write(lambda r: r.channels.remove_member("#x", a.id))
    assert not await db.write(lambda r: r.channels.remove_member("#x", a.id))


async def test_last_seen_only_moves_forward(db: Engine) -> None:
    a = await peer(db, "a")
    await db.write(lambda r: r.peers.touch({a.id: NOW + 10}))
    await db.write(lambda r: r.peers.touch({a.id: NOW + 5}))
    found = await holder(db, "a")
    assert found is not None
    assert found.last_seen == NOW + 10


async def test_a_rename_onto_an_active_name_is_refused(db: Engine) -> None:
    a, _ = await peer(db, "a"), await peer(db, "b")
    with pytest.raises(NameInUse):
        await db.write(lambda r: r.peers.rename(a.id, "b"))


async def test_one_failing_operation_does_not_undo_concurrent_ones(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    results = await asyncio.gather(
        *[send(db, a, "b", f"ok{i}") for i in range(20)],
        send(db, a, "ghost"),
        return_exceptions=True,
    )
    assert sum(isinstance(r, NotFound) for r in results) == 1
    assert (await peek(db, b)).pending == 20


async def test_a_direct_message_reaches_whoever_holds_the_name_now(db: Engine) -> None:
    a, first = await peer(db, "a"), await peer(db, "b")
    await send(db, a, "b", "to the first b")
    await end(db, first, PeerState.LEFT)
    second = await peer(db, "b")
    await send(db, a, "b", "to the second b")
    assert (await peek(db, second)).pending == 1
    await db.write(lambda r: r.peers.rename(second.id, "b2"))
    with pytest.raises(NotFound):
        await send(db, a, "b")
    assert (await send(db, a, "b2")).receipt.delivered_to == ["b2"]
    await reap(db, NOW + 1, NOW + 1, {a.id})
    assert (await send(db, a, "b2")).receipt.missed == ["b2"]
