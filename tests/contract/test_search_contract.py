"""The contract for search (issue 34), run against each backend: an agent finds only what it
may read (its directs, its channels, broadcasts), the operator everything; a name taken again
does not inherit its old holder's directs; English word forms and phrases match; the filters,
the orders and the limit hold; a deleted message is gone from the index; the index follows
the log; and a thread's summary reads only what its reader may read."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from caucus.domain.peers import Peer
from caucus.errors import InvalidRequest, NotFound
from caucus.services.hub import Hub
from tests.contract.conftest import NOW

FORM = [{"key": "go", "label": "Go ahead", "type": "radio", "options": ["yes", "no"]}]


async def join(room: Hub, name: str) -> Peer:
    return (await room.principals.register(name=name)).peer


async def said(room: Hub, peer: Peer | None, q: str, **filters: object) -> list[str]:
    found = await room.search.search(peer, q, **filters)  # type: ignore[arg-type]
    return sorted(h.message.content for h in found.hits)


def advance(room: Hub, seconds: float) -> None:
    room.clock.advance(seconds)  # type: ignore[attr-defined]


async def test_each_reader_finds_what_it_may_read_and_the_operator_everything(
    room: Hub,
) -> None:
    alice, bob, carol = [await join(room, n) for n in ("alice", "bob", "carol")]
    for p in (alice, bob):
        await room.channels.join(p, "#ops")
    await room.delivery.send(alice, to="bob", content="the parser rewrite is ready")
    await room.delivery.send(bob, to="carol", content="parser notes for carol alone")
    await room.delivery.send(alice, to="#ops", content="parser benchmarks look good")
    await room.delivery.send(carol, to="all", content="parser lunch for everyone")
    await room.delivery.send(carol, to="all", content="nothing to see here")
    assert await said(room, bob, "parser") == [
        "parser benchmarks look good",
        "parser lunch for everyone",
        "parser notes for carol alone",
        "the parser rewrite is ready",
    ]
    assert await said(room, alice, "parser") == [
        "parser benchmarks look good",
        "parser lunch for everyone",
        "the parser rewrite is ready",
    ]
    assert await said(room, carol, "parser") == [
        "parser lunch for everyone",
        "parser notes for carol alone",
    ]
    assert len(await said(room, None, "parser")) == 4
    # Joining a channel opens its history; leaving it closes what was not delivered to you.
    await room.channels.join(carol, "#ops")
    assert "parser benchmarks look good" in await said(room, carol, "parser")
    await room.channels.leave(alice, "#ops")
    await room.delivery.send(bob, to="#ops", content="parser follow-up once alice left")
    assert "parser follow-up once alice left" in await said(room, carol, "parser")
    found = await said(room, alice, "parser")
    assert "parser follow-up once alice left" not in found
    assert "parser benchmarks look good" in found  # delivered to her while she was in


async def test_a_name_taken_again_does_not_find_its_old_holder_s_directs(room: Hub) -> None:
    alice, dave = await join(room, "alice"), await join(room, "dave")
    await room.delivery.send(alice, to="dave", content="the deploy token is rotated")
    assert await said(room, dave, "deploy token") == ["the deploy token is rotated"]
    await room.registry.leave(dave)
    advance(room, 1)
    again = await join(room, "dave")
    assert await said(room, again, "deploy token") == []
    await room.delivery.send(alice, to="dave", content="a deploy token for the new dave")
    assert await said(room, again, "deploy token") == ["a deploy token for the new dave"]


async def test_word_forms_match_and_phrases_keep_their_order(room: Hub) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    await room.delivery.send(alice, to="bob", content="Reserving files under src/caucus/web.py")
    await room.delivery.send(alice, to="bob", content="files were reserved; reserving more")
    assert len(await said(room, bob, "reserve")) == 2
    assert await said(room, bob, '"reserving files"') == ["Reserving files under src/caucus/web.py"]
    assert await said(room, bob, '"files reserving"') == []
    # Punctuation splits words, as in a path.
    assert await said(room, bob, "caucus/web.py") == ["Reserving files under src/caucus/web.py"]
    assert await said(room, bob, "WEB") == ["Reserving files under src/caucus/web.py"]
    # A lone common word is skipped on both stores alike (PostgreSQL's english list).
    assert await said(room, bob, "the files under") == await said(room, bob, "files")
    with pytest.raises(InvalidRequest):
        await room.search.search(bob, "the of and")
    with pytest.raises(InvalidRequest) as no_words:
        await room.search.search(bob, '"" ... --')
    assert no_words.value.extra["field"] == "q"


async def test_filters_orders_and_the_limit_hold(room: Hub) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    await room.channels.join(alice, "#ops")
    first = await room.delivery.send(alice, to="bob", content="migration plan: migration first")
    advance(room, 10)
    await room.delivery.send(
        bob, to="alice", content="migration looks fine", thread=first.message_id
    )
    advance(room, 10)
    await room.delivery.send(alice, to="#ops", content="a migration note for ops")
    task = await room.tasks.send(alice, to="bob", payload="run the migration", subject="db")
    assert await said(room, alice, "migration", sender="bob") == ["migration looks fine"]
    assert await said(room, alice, "migration", channel="#ops") == ["a migration note for ops"]
    assert await said(room, alice, "migration", since=NOW + 5, until=NOW + 15) == [
        "migration looks fine"
    ]
    assert await said(room, alice, "migration", thread=first.message_id) == [
        "migration looks fine",
        "migration plan: migration first",
    ]
    found = await room.search.search(alice, "migration", kind="task")
    assert [(h.kind.value, h.message.meta["task_id"]) for h in found.hits] == [  # type: ignore[index]
        ("task", task.id)
    ]
    newest = await room.search.search(alice, "migration", order="recent", limit=2)
    assert [h.message.content for h in newest.hits] == [
        "run the migration",
        "a migration note for ops",
    ]
    assert newest.more
    best = await room.search.search(alice, "migration", limit=1)
    assert best.hits[0].message.content == "migration plan: migration first"  # said twice
    assert "**migration**" in best.hits[0].snippet
    for bad in ({"kind": "gossip"}, {"order": "loud"}, {"limit": 0}, {"since": NOW, "until": 1}):
        with pytest.raises(InvalidRequest):
            await room.search.search(alice, "migration", **bad)  # type: ignore[arg-type]


async def test_a_deleted_message_leaves_the_index_and_the_index_follows_the_log(
    room: Hub,
) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    gone = await room.delivery.send(alice, to="bob", content="ephemeral kumquat")
    await room.delivery.send(alice, to="bob", content="durable kumquat")
    await room.search.follow()
    assert await room._db.read(lambda r: r.search.unindexed()) == 0
    await room._db.write(lambda r: r.tx.run("message_delete", {"id": gone.seq}))
    assert await said(room, bob, "kumquat") == ["durable kumquat"]
    await room.delivery.send(alice, to="bob", content="another kumquat")
    behind = await room._db.read(lambda r: r.search.unindexed())
    sqlite = room._db.dialect == "sqlite"
    assert behind == (1 if sqlite else 0)
    if sqlite:  # the index in its own file still holds the purged message's words
        assert indexed(room, "ephemeral") == 1
    assert await room.search.follow() == behind * 2  # one indexed, one forgotten
    assert await said(room, bob, "kumquat") == ["another kumquat", "durable kumquat"]
    if sqlite:  # forgotten, not only hidden by the join with the log
        assert indexed(room, "ephemeral") == 0
        assert indexed(room, "kumquat") == 2


def indexed(room: Hub, word: str) -> int:
    """How many messages the SQLite index file holds `word` for (read from the file)."""
    path = room._db.index_path  # type: ignore[attr-defined]
    with contextlib.closing(sqlite3.connect(path)) as conn:
        found: int = conn.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (word,)
        ).fetchone()[0]
    return found


async def test_decisions_are_found_by_their_audience(room: Hub) -> None:
    asker, alice = await join(room, "asker"), await join(room, "alice")
    everyone = await room.forms.ask(asker, "Adopt the rollout checklist?", FORM)
    await room.forms.answer(everyone.id, {"go": "yes"})
    await room.channels.join(asker, "#core")
    private = await room.forms.ask(asker, "Rollout freeze for core?", FORM, to="#core")
    await room.forms.answer(private.id, {"go": "no"})
    subjects = [d.record["subject"] for d in (await room.search.search(alice, "rollout")).decisions]
    assert subjects == ["Adopt the rollout checklist?"]
    found = await room.search.search(asker, "rollout")
    assert [d.record["subject"] for d in found.decisions] == [
        "Rollout freeze for core?",
        "Adopt the rollout checklist?",
    ]
    assert "**Rollout**" in found.decisions[0].snippet
    assert (await room.search.search(asker, "rollout", kind="message")).decisions == []
    assert len((await room.search.search(None, "rollout", channel="#core")).decisions) == 1


async def test_a_thread_s_summary_reads_what_its_reader_may_read(room: Hub) -> None:
    alice, bob, carol = [await join(room, n) for n in ("alice", "bob", "carol")]
    root = await room.delivery.send(
        alice, to="bob", content="Can you review the cache eviction change? It touches the LRU."
    )
    lines = [
        (bob, "The cache eviction change drops entries too early. The LRU clock is off by one."),
        (alice, "Good catch: the LRU clock starts at zero. I will fix the cache eviction test."),
        (bob, "Fine. Ship it."),
        (alice, "Fixed the LRU clock and the cache eviction test; merged."),
    ]
    for who, text in lines:
        advance(room, 60)
        await room.delivery.send(
            who, to="bob" if who is alice else "alice", content=text, thread=root.message_id
        )
    summary = await room.search.thread_summary(bob, root.message_id)
    d = summary.digest
    assert (summary.method, d.messages, d.participants) == (
        "extractive",
        5,
        [("alice", 3), ("bob", 2)],
    )
    assert d.opening.seq == root.seq
    assert d.latest.content.startswith("Fixed the LRU clock")
    # The key points are the middle's sentences on what the thread keeps coming back to.
    assert [p.text for p in d.key_points] == [
        "The cache eviction change drops entries too early.",
        "The LRU clock is off by one.",
        "Good catch: the LRU clock starts at zero.",
        "I will fix the cache eviction test.",
    ]
    assert summary.summary.splitlines() == [
        "5 messages, 1970-01-12 13:46 UTC to 1970-01-12 13:50 UTC, from alice (3), bob (2).",
        "Opened by alice: “Can you review the cache eviction change? It touches the LRU.”",
        "Key points: bob: “The cache eviction change drops entries too early.”; bob: “The LRU"
        " clock is off by one.”; alice: “Good catch: the LRU clock starts at zero.”; alice: “I"
        " will fix the cache eviction test.”",
        "Latest, alice: “Fixed the LRU clock and the cache eviction test; merged.”",
    ]
    with pytest.raises(NotFound):
        await room.search.thread_summary(carol, root.message_id)
    assert (await room.search.thread_summary(None, root.message_id)).digest.messages == 5


async def test_the_transcripts_text_filter_reads_the_search_index(room: Hub) -> None:
    """Issue 53: the operator's transcript filtered by text finds what search would (word
    forms, phrases), newest last, a page at a time back from `before`, including what the
    index had not taken in yet; a filter of only common words says so."""
    alice = await join(room, "alice")
    await join(room, "bob")
    said = [
        "the parsers are rewritten",
        "lunch at noon",
        "parser benchmarks look good",
        "a parsed config",
        "nothing here",
    ]
    for text in said:
        await room.delivery.send(alice, to="bob", content=text)
    page, more = await room.history.page(text="parser")
    assert [m.content for m in page] == [said[0], said[2]]
    assert not more
    older, more = await room.history.page(text="parser", before=page[-1].seq, limit=1)
    assert ([m.content for m in older], more) == ([said[0]], False)
    newest, more = await room.history.page(text="parser", limit=1)
    assert ([m.content for m in newest], more) == ([said[2]], True)
    phrase, _ = await room.history.page(text='"parser benchmarks"', peer="bob")
    assert [m.content for m in phrase] == [said[2]]
    with pytest.raises(InvalidRequest):
        await room.history.page(text="the")


async def test_the_text_filter_finds_a_rare_word_far_back_and_a_common_one_near(
    room: Hub,
) -> None:
    """Issue 53: the filter walks the newest messages for a common word and reads the index
    for what lies further back (PostgreSQL's statement has both ways; 20,000 is its walk)."""
    from caucus.domain.messages import Message
    from caucus.services.history_import import HistoryImport, archived_row

    def said(n: int) -> str:
        return "a kumquat marmalade" if n in (3, 20_100) else f"common chatter {n}"

    rows = [
        archived_row(Message(n, f"old-{n}", NOW + n, "alice", "all", "chat", said(n)), 8192)
        for n in range(20_102)
    ]
    await HistoryImport(room._db, 8192).load(rows, lambda stage, n: None)
    found, more = await room.history.page(text="kumquat")
    assert [m.id for m in found] == ["old-3", "old-20100"]
    assert not more
    near, more = await room.history.page(text="chatter", limit=2)
    assert ([m.id for m in near], more) == (["old-20099", "old-20101"], True)
