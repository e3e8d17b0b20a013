"""Units that run together (storage.engine.Together): several direct sends, or several peers'
claims, stored as one statement where each statement is a round trip to a server (PostgreSQL),
must give every caller what it would have got alone, on every backend."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from caucus.domain.messages import AppendOutcome, ClaimRequest, ClaimResult, NewMessage
from caucus.domain.names import Target, TargetKind
from caucus.domain.peers import Peer
from caucus.errors import InvalidRequest, NameInUse, NotFound
from caucus.services.delivery_units import Append, AppendClaim, Claim
from caucus.storage.engine import Duplicate, Engine
from caucus.storage.repos import Repos
from tests.contract.conftest import NOW
from tests.contract.test_store_contract import claim, peek, peer, reap, send

_ids = itertools.count(1)


def direct(sender: Peer | None, to: str, content: str = "hi", **extra: Any) -> NewMessage:
    return NewMessage(
        id=f"t_{next(_ids)}",
        ts=NOW,
        sender_id=sender.id if sender is not None else None,
        sender=sender.name if sender is not None else "operator",
        to=to,
        kind="chat",
        content=content,
        **extra,
    )


def request(p: Peer, **extra: Any) -> ClaimRequest:
    return ClaimRequest(p.id, extra.pop("now", NOW), 60, extra.pop("limit", 100), **extra)


async def test_direct_sends_stored_together_answer_each_as_alone(db: Engine) -> None:
    a, b, c = await peer(db, "a"), await peer(db, "b"), await peer(db, "c")
    await reap(db, NOW + 1, NOW + 1, {a.id, b.id})  # c is away: its copy is held, and missed
    messages = [
        (direct(a, "b", "one", meta={"n": 1}, thread="t-1"), "b"),
        (direct(a, "ghost"), "ghost"),
        (direct(a, "a"), "a"),
        (direct(a, "c", "two"), "c"),
        (direct(None, "b", "from the operator"), "b"),
        (direct(b, "a", "three"), "a"),
    ]
    out = await db.write(lambda r: r.inbox.append_direct_many(messages)())
    assert isinstance(out[1], NotFound)
    assert out[1].code == "not_found"
    assert isinstance(out[2], InvalidRequest)
    stored = [o for o in out if isinstance(o, AppendOutcome)]
    assert [(o.receipt.delivered_to, o.receipt.missed) for o in stored] == [
        (["b"], []),
        (["c"], ["c"]),
        (["b"], []),
        (["a"], []),
    ]
    seqs = [o.receipt.seq for o in stored]
    assert seqs == sorted(seqs)  # stored in the order given
    assert len(set(seqs)) == 4
    assert [r.peer_id for o in stored for r in o.recipients] == [b.id, c.id, b.id, a.id]
    got = (await claim(db, b)).deliveries
    assert [(d.message.content, d.message.meta, d.message.thread) for d in got] == [
        ("one", {"n": 1}, "t-1"),
        ("from the operator", None, None),
    ]
    assert [d.message.seq for d in got] == [seqs[0], seqs[2]]
    assert (await peek(db, c)).pending == 1
    found = await db.read(lambda r: r.messages.by_seq(seqs[1]))
    assert found is not None
    assert (found[1], found[2]) == (["c"], ["c"])


async def test_sends_with_a_key_or_a_reply_are_not_taken_together(db: Engine) -> None:
    a, _ = await peer(db, "a"), await peer(db, "b")
    keyed = [(direct(a, "b", idempotency_key="k"), "b")]
    with pytest.raises(ValueError, match="idempotency"):
        await db.write(lambda r: r.inbox.append_direct_many(keyed)())
    assert Append(keyed[0][0], Target(TargetKind.PEER, "b"), 0.0).together is None
    assert Append(direct(a, "b"), Target(TargetKind.ALL, "all"), 0.0).together is None
    assert Append(direct(a, "b"), Target(TargetKind.PEER, "b"), 0.0).together == "direct"


async def test_claims_made_together_answer_each_as_alone(db: Engine) -> None:
    a, b, c, d = [await peer(db, n) for n in "abcd"]
    for i in range(4):
        await send(db, a, "b", f"b{i}")
    await send(db, a, "c", "c0")
    first = await claim(db, b, limit=2)
    assert (first.drained, first.next_visible_at) == (False, None)  # two more are visible
    through = first.deliveries[-1].message.seq
    await claim(db, c)  # c's one delivery is in flight: nothing visible until it times out
    results: list[ClaimResult] = await db.write(
        lambda r: r.inbox.claim_many(
            [request(b, ack_through=through), request(c), request(d), request(a, limit=1)]
        )()
    )
    assert [d.message.content for d in results[0].deliveries] == ["b2", "b3"]
    # b got every visible one: when its next shows (the two just handed out) is known.
    assert (results[0].acked, results[0].next_visible_at, results[0].drained) == (2, NOW + 60, True)
    assert (results[1].deliveries, results[1].acked) == ([], 0)
    assert results[1].next_visible_at == pytest.approx(NOW + 60)
    assert (results[2].deliveries, results[2].next_visible_at) == ([], None)
    assert (results[3].deliveries, results[3].drained) == ([], False)
    assert (await peek(db, b)).pending == 2  # the acknowledged batch is gone
    # The batch handed out together comes back after its timeout, redelivered.
    back = await claim(db, b, now=NOW + 61)
    assert [(d.message.content, d.delivery_count) for d in back.deliveries] == [
        ("b2", 2),
        ("b3", 2),
    ]


async def test_a_paused_claim_taken_together_gets_only_the_priority_lane(db: Engine) -> None:
    a, b, c = await peer(db, "a"), await peer(db, "b"), await peer(db, "c")
    await send(db, a, "b", "chatter")
    control = direct(None, "b", "stop", lane=0)
    await db.write(lambda r: r.inbox.append(control, Target(TargetKind.PEER, "b")))
    await send(db, a, "c", "for c")
    results = await db.write(
        lambda r: r.inbox.claim_many([request(b, priority_only=True), request(c)])()
    )
    assert [d.message.content for d in results[0].deliveries] == ["stop"]
    assert [d.message.content for d in results[1].deliveries] == ["for c"]


async def test_one_peer_claims_together_at_most_once(db: Engine) -> None:
    b = await peer(db, "b")
    with pytest.raises(ValueError, match="one claim per peer"):
        await db.write(lambda r: r.inbox.claim_many([request(b), request(b)])())


async def test_concurrent_units_each_get_their_own_outcome(db: Engine) -> None:
    """Sends and claims queued at once (grouped on PostgreSQL), beside a unit that makes a
    statement fail: every caller gets its own answer, nothing is lost or stored twice."""
    senders = [await peer(db, f"s{i}") for i in range(8)]
    receivers = [await peer(db, f"r{i}") for i in range(8)]
    await send(db, senders[0], "r0", "waiting")

    def taken_name(r: Repos) -> None:
        # A statement that fails on the server (the name is taken), caught by the unit: on
        # PostgreSQL the batch is rolled back and replayed, each unit alone.
        try:
            r.tx.run("peer_rename", {"id": senders[1].id, "name": "s2"})
        except Duplicate:
            raise NameInUse("s2 is taken", name="s2") from None

    units: list[Any] = [
        Append(direct(s, f"r{i}", f"m{i}"), Target(TargetKind.PEER, f"r{i}"), 0.0)
        for i, s in enumerate(senders)
    ]
    units.append(Append(direct(senders[0], "nobody"), Target(TargetKind.PEER, "nobody"), 0.0))
    units += [Claim(request(r)) for r in receivers[:2]]
    units.append(Claim(request(receivers[0])))  # the same peer twice in one batch
    outcomes = await asyncio.gather(
        *(db.write(u) for u in units), db.write(taken_name), return_exceptions=True
    )
    sent = outcomes[:8]
    assert all(isinstance(o, AppendOutcome) for o in sent), sent
    assert isinstance(outcomes[8], NotFound)
    assert isinstance(outcomes[-1], NameInUse)
    claimed = [o for o in outcomes[9:12] if isinstance(o, ClaimResult)]
    assert len(claimed) == 3
    contents = sorted(d.message.content for c in claimed for d in c.deliveries)
    # r0's two claims never hand out one delivery twice; what they did not take is still there.
    assert len(contents) == len(set(contents))
    for r in receivers:
        contents += [d.message.content for d in (await claim(db, r)).deliveries]
    assert sorted(contents) == sorted(["waiting", *(f"m{i}" for i in range(8))])
    if db.dialect == "postgres":
        assert db.stats["write_together"] > 0  # some of them did run together


async def test_a_batch_of_sends_and_claims_alone_commits_as_it_stores(db: Engine) -> None:
    """ADR 0043: direct sends and claims alone in a batch commit in the round trip that
    stores them (PostgreSQL). A send the server refuses (text with a NUL character) makes it
    skip that COMMIT, and the batch is replayed unit by unit: the others are stored once each.
    A peer's two claims in one such batch never hand out a delivery twice."""
    senders = [await peer(db, f"s{i}") for i in range(6)]
    receivers = [await peer(db, f"r{i}") for i in range(6)]

    def sends(tag: str, bad: int | None = None) -> list[Append]:
        return [
            Append(
                direct(s, f"r{i}", f"{tag}{i}" + ("\x00" if i == bad else "")),
                Target(TargetKind.PEER, f"r{i}"),
                0.0,
            )
            for i, s in enumerate(senders)
        ]

    clean = await asyncio.gather(*(db.write(u) for u in sends("a")))
    assert all(isinstance(o, AppendOutcome) for o in clean)
    mixed = await asyncio.gather(*(db.write(u) for u in sends("b", bad=3)), return_exceptions=True)
    postgres = db.dialect == "postgres"
    if postgres:
        assert db.stats["write_committed_first"] > 0
        assert isinstance(mixed[3], InvalidRequest)
        assert [i for i, o in enumerate(mixed) if not isinstance(o, AppendOutcome)] == [3]
    else:  # SQLite stores the NUL character
        assert all(isinstance(o, AppendOutcome) for o in mixed)
    before = db.stats.get("write_committed_first", 0)
    claims = [Claim(request(r, limit=1)) for r in receivers] + [Claim(request(receivers[0]))]
    claimed = await asyncio.gather(*(db.write(u) for u in claims))
    if postgres:
        assert db.stats["write_committed_first"] > before
    got = [[d.message.content for d in c.deliveries] for c in claimed]
    assert got[:6] == [[f"a{i}"] for i in range(6)]
    assert got[6] == [mixed[0].message.content]  # r0's second claim: the next one, not a0
    for i, r in enumerate(receivers[1:], start=1):
        rest = [d.message.content for d in (await claim(db, r)).deliveries]
        assert rest == ([] if i == 3 and postgres else [mixed[i].message.content])


async def test_sends_that_claim_for_their_recipients_answer_each_as_alone(db: Engine) -> None:
    """Sends each claiming for its recipient's parked receive (`AppendClaim`), queued at once:
    together on PostgreSQL (their sends in one statement, then their claims in one that sees
    them), each caller gets its message stored and its recipient's claim handing it out,
    after what was already waiting. A send refused answers its error; what its claim took
    shows again after the visibility timeout (on SQLite it took nothing)."""
    senders = [await peer(db, f"s{i}") for i in range(3)]
    receivers = [await peer(db, f"r{i}") for i in range(4)]
    await send(db, senders[0], "r0", "waiting")
    await send(db, senders[0], "r3", "kept")

    def unit(s: Peer, to: str, r: Peer, content: str) -> AppendClaim:
        append = Append(direct(s, to, content), Target(TargetKind.PEER, to), 0.0)
        return AppendClaim(append, Claim(request(r)))

    units = [unit(s, f"r{i}", receivers[i], f"m{i}") for i, s in enumerate(senders)]
    units.append(unit(senders[1], "ghost", receivers[3], "lost"))
    before = db.stats.get("write_together", 0)
    outcomes = await asyncio.gather(*(db.write(u) for u in units), return_exceptions=True)
    together = db.stats.get("write_together", 0) - before
    assert isinstance(outcomes[3], NotFound)
    for i, answer in enumerate(outcomes[:3]):
        assert isinstance(answer, tuple), answer
        stored, claimed = answer
        assert stored.receipt.delivered_to == [f"r{i}"]
        contents = [d.message.content for d in claimed.deliveries]
        assert contents == (["waiting", "m0"] if i == 0 else [f"m{i}"])
        assert (await claim(db, receivers[i])).deliveries == []  # handed out once
    later = await db.write(Claim(request(receivers[3], now=NOW + 61)))
    assert [d.message.content for d in later.deliveries] == ["kept"]
    if db.dialect == "postgres":  # each ran with its kind, none alone
        assert together == len(units)
