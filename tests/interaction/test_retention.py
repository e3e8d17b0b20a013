"""Retention: a week of traffic shrinks to its bound; nothing unacknowledged or unended goes,
nor anything the decision ledger holds; the operator purges on request; history and the export
say what was dropped."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import httpx2
import pytest

from caucus.clock import Clock
from caucus.ledger.tail import newest_first
from caucus.services.hub import Hub
from caucus.services.retention import PURGE_BUDGET, PURGE_BUDGET_BUSY, purge_budget
from caucus.testing import FakeClock, make_hub, serve

DAY = 86400.0
FILLER = "x" * 900
FORM = [{"key": "go", "type": "radio", "options": ["yes", "no"]}]


async def simulate_week(hub: Hub, clock: FakeClock, per_hour: int) -> dict[str, object]:
    """Seven days of traffic: alice talks to bob (who acknowledges everything) and to carol
    (who never does); tasks and offers end or stay open; forms are answered or left."""
    alice = (await hub.principals.register(name="alice")).peer
    bob = (await hub.principals.register(name="bob")).peer
    await hub.principals.register(name="carol")
    kept: dict[str, list[str]] = {"carol": [], "open_tasks": [], "pending_forms": []}
    for hour in range(7 * 24):
        for n in range(per_hour):
            await hub.delivery.send(alice, to="bob", content=f"h{hour} n{n} {FILLER}")
        while got := (await hub.delivery.receive(bob, wait=0)).deliveries:
            await hub.delivery.ack(bob, through=got[-1].message.seq)
        if hour % 24 == 0:
            receipt = await hub.delivery.send(alice, to="carol", content=f"day {hour // 24}")
            kept["carol"].append(receipt.message_id)
            done = await hub.tasks.send(alice, to="bob", payload=f"task {hour}")
            await hub.tasks.reply(bob, done.id, "done")
            still = await hub.tasks.send(alice, to="bob", payload=f"open task {hour}")
            kept["open_tasks"].append(still.id)
            asked = await hub.forms.ask(alice, f"Q{hour}", FORM)
            await hub.forms.answer(asked.id, {"go": "yes"})
        clock.advance(3600)
    pending = await hub.forms.ask(alice, "still open?", FORM)
    kept["pending_forms"].append(pending.id)
    await hub.decisions.record_pending()
    return kept


@pytest.mark.sqlite_file
async def test_a_week_of_traffic_shrinks_to_its_bound_and_keeps_what_is_unfinished(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    bound = 1_500_000
    async with make_hub(
        tmp_path,
        clock=clock,
        send_rate_capacity=1e9,
        reaped_grace=30 * DAY,
        peer_ttl=30 * DAY,
        retention_age=3 * DAY,
        retention_max_bytes=bound,
    ) as hub:
        kept = await simulate_week(hub, clock, per_hour=20)
        db = hub.db_path
        assert db is not None
        records = len(list(newest_first(hub.decisions.path)))
        before = await hub._db.size()
        assert before.used_bytes > 2 * bound  # the week really is over the bound
        for _ in range(50):  # maintenance rounds, as the loop runs them (`Hub.maintain`)
            await hub.search.follow()
            if (await hub.retention.sweep()).total == 0:
                break
        await hub.search.follow()  # the index forgets the last round's, the queue empties
        after = await hub._db.size()
        assert after.used_bytes <= bound
        assert after.file_bytes < before.file_bytes / 2  # given back, not only reusable
        # Nothing unacknowledged, unended or unrecorded went.
        carol = await hub.registry.find("carol")
        got = await hub.delivery.receive(carol, wait=0, limit=100)
        chats = [d.message.id for d in got.deliveries if d.message.kind == "chat"]
        assert chats == kept["carol"]
        assert len(got.deliveries) > len(chats)  # the form answers she never acknowledged
        alice = await hub.registry.find("alice")
        for task_id in kept["open_tasks"]:
            assert (await hub.tasks.status(alice, task_id)).state in ("pending", "in_progress")
        for form_id in kept["pending_forms"]:
            assert (await hub.forms.get(form_id)).state == "pending"
        assert len(list(newest_first(hub.decisions.path))) == records  # the ledger: untouched
        dropped = await hub.retention.dropped()
        assert dropped.messages > 0
        assert dropped.through_ts is not None
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.sqlite_file
async def test_the_operator_purges_on_request_and_history_and_export_say_so(
    tmp_path: Path,
) -> None:
    clock: Clock = FakeClock()
    async with make_hub(tmp_path, clock=clock, send_rate_capacity=1e9) as hub:
        assert isinstance(clock, FakeClock)
        alice = (await hub.principals.register(name="alice")).peer
        bob = (await hub.principals.register(name="bob")).peer
        for n in range(300):
            await hub.delivery.send(alice, to="bob", content=f"old {n} {FILLER}")
        while got := (await hub.delivery.receive(bob, wait=0)).deliveries:
            await hub.delivery.ack(bob, through=got[-1].message.seq)
        clock.advance(2 * DAY)
        await hub.delivery.send(alice, to="bob", content="new, unacknowledged")
        async with serve(hub) as url, httpx2.AsyncClient(base_url=url) as http:
            op = {"Authorization": f"Bearer {hub.operator.token}"}
            dry = await http.post(
                "/operator/purge", json={"before": clock.now() - DAY, "dry_run": True}, headers=op
            )
            assert dry.status_code == 200, dry.text
            assert (dry.json()["dry_run"], dry.json()["messages"]) == (True, 300)
            history = (await http.get("/operator/messages", headers=op)).json()
            assert history["dropped"] is None
            assert len(history["messages"]) == 200  # nothing went in the dry run
            done = await http.post(
                "/operator/purge", json={"before": clock.now() - DAY}, headers=op
            )
            body = done.json()
            assert (body["messages"], body["dry_run"]) == (300, False)
            assert body["size_after"]["file_bytes"] < body["size_before"]["file_bytes"]
            history = (await http.get("/operator/messages", headers=op)).json()
            assert [m["content"] for m in history["messages"]] == ["new, unacknowledged"]
            assert history["dropped"]["messages"] == 300
            exported = (await http.get("/export", headers=op)).json()
            assert exported["dropped_by_retention"]["messages"] == 300
            markdown = (await http.get("/export?format=markdown", headers=op)).text
            assert "Retention dropped 300 older messages" in markdown
            agent = (await http.post("/register", json={"name": "eve"})).json()["token"]
            refused = await http.post(
                "/operator/purge", json={}, headers={"Authorization": f"Bearer {agent}"}
            )
            assert refused.status_code == 403


async def acknowledged(hub: Hub, count: int, words: str = "") -> None:
    """alice sends bob `count` notes (each `words` longer) and bob acknowledges them all:
    finished messages, for retention to take."""
    alice = (await hub.principals.register(name="alice")).peer
    bob = (await hub.principals.register(name="bob")).peer
    for n in range(count):
        await hub.delivery.send(alice, to="bob", content=f"note {n}{words}")
    while got := (await hub.delivery.receive(bob, wait=0, limit=100)).deliveries:
        await hub.delivery.ack(bob, through=got[-1].message.seq)


class SlowMachine(FakeClock):
    """A fake clock on which everything timed takes `step` seconds: each read of the monotonic
    clock moves it on (a unit of work reads it as it starts and as it ends)."""

    step = 0.0

    def monotonic(self) -> float:
        self.advance(self.step)
        return super().monotonic()


async def test_a_round_of_retention_holds_the_store_in_small_slices_up_to_its_budget(
    tmp_path: Path,
) -> None:
    """Issue 53: on a machine where a slice takes 4 ms, each next slice is smaller, and the
    round stops at its budget (0.2 s of slices); where one takes 10 ms (past a stall), that
    one ends the round; the next round goes on from there."""
    clock = SlowMachine()
    async with make_hub(
        tmp_path, clock=clock, send_rate_capacity=1e9, retention_age=DAY, retention_batch=100
    ) as hub:
        await acknowledged(hub, 800)
        clock.advance(2 * DAY)
        clock.step = 0.004
        first = await hub.retention.sweep()
        assert 10 < first.messages < 800  # more than one slice, not all of them
        assert hub.retention._slices.size == 10  # shrunk to its least
        clock.step = 0.01
        second = await hub.retention.sweep()
        assert second.messages == 10  # one slice, past a stall: the round ends there
        clock.step = 0.0
        third = await hub.retention.sweep()
        assert first.messages + second.messages + third.messages == 800


async def busy_rounds(tmp_path: Path, **settings: Any) -> tuple[int, int, int]:
    """Messages purged by a round in a quiet room, by one after others wrote 300 units in a
    second, and by one after ten quiet seconds; 2,000 finished messages (2 MB), two days
    old."""
    clock = SlowMachine()
    async with make_hub(tmp_path, clock=clock, send_rate_capacity=1e9, **settings) as hub:
        await acknowledged(hub, 2000, FILLER)
        alice = await hub.registry.find("alice")
        await hub.principals.register(name="carol")
        clock.advance(2 * DAY)
        clock.step = 0.002  # two reads a slice: 2 ms each
        quiet = await hub.retention.sweep()
        clock.step = 0.0
        for n in range(300):  # others write: 300 units in the next second
            await hub.delivery.send(alice, to="carol", content=f"meanwhile {n}")
        clock.advance(1.0)
        clock.step = 0.002
        busy = await hub.retention.sweep()
        clock.step = 0.0
        clock.advance(10.0)  # nobody writes for a while
        clock.step = 0.002
        again = await hub.retention.sweep()
        return quiet.messages, busy.messages, again.messages


async def test_retention_purges_gently_while_sends_flow_and_at_speed_when_the_room_is_quiet(
    tmp_path: Path,
) -> None:
    """Issue 53: each purge slice's pages reach the disk with the next send's commit, so while
    others write (100 units a second or more) a round purges about as many items as they
    wrote (a room at its bound keeps pace), and for 0.2 s once the room is quiet again."""
    quiet, busy, again = await busy_rounds(tmp_path, retention_age=DAY, retention_batch=100)
    # Half as many as the units that came in (a message is about two), not the quiet
    # room's 0.2 s of slices; the sizes differ a little from round to round.
    assert 150 <= busy < min(quiet, again) / 4


async def test_a_busy_room_over_its_size_bound_purges_faster_than_it_fills(
    tmp_path: Path,
) -> None:
    """Issue 53: at the plain busy pace a room over its bound stays there (PostgreSQL held
    794 MB against a 556 MB bound under 500 messages a second); over it, a busy round
    purges more than came in, the more the further over (here about half a bound over, 1.5
    MB in a 1 MiB bound, coming down to it in that round; how the budget grows with how far
    over is the next test's)."""
    paced = (await busy_rounds(tmp_path / "age", retention_age=DAY, retention_batch=100))[1]
    far_over = await busy_rounds(
        tmp_path / "bound", retention_max_bytes=1024 * 1024, retention_batch=100
    )
    assert far_over[1] > 1.5 * paced


def test_a_busy_rounds_budget_grows_with_how_far_over_the_bound_the_room_is() -> None:
    at_bound = purge_budget(1000, 0.0001, 0.0)
    assert at_bound == pytest.approx(0.05)  # half an item a unit, 100 us an item
    assert purge_budget(1000, 0.0001, 0.4) == pytest.approx(at_bound * 1.8)
    assert purge_budget(1000, 0.0001, 10.0) == PURGE_BUDGET  # never past a quiet round's
    assert purge_budget(10, 0.0001, 0.0) == PURGE_BUDGET_BUSY  # a floor, to come down at all


@pytest.mark.sqlite_file
async def test_a_little_free_space_is_kept_for_the_next_messages_more_is_given_back(
    tmp_path: Path,
) -> None:
    """ADR 0041: a sweep that frees less than a quarter of the file keeps the pages (the next
    messages reuse them); one that frees more gives them back."""
    clock = FakeClock()
    async with make_hub(tmp_path, clock=clock, send_rate_capacity=1e9, retention_age=DAY) as hub:
        alice = (await hub.principals.register(name="alice")).peer
        bob = (await hub.principals.register(name="bob")).peer
        for batch in range(10):
            for n in range(150):
                await hub.delivery.send(alice, to="bob", content=f"batch {batch} note {n} " * 20)
            while got := (await hub.delivery.receive(bob, wait=0, limit=100)).deliveries:
                await hub.delivery.ack(bob, through=got[-1].message.seq)
            clock.advance(DAY / 10)
        # Only the first batch (a tenth of the file) is now more than a day old.
        clock.advance(DAY / 20)
        await hub.search.follow()
        before = await hub._db.size()
        assert (await hub.retention.sweep()).messages == 150
        await hub.search.follow()  # the next round: the index forgets them, the queue empties
        await hub.retention.sweep()
        kept = await hub._db.size()
        assert kept.used_bytes < before.used_bytes  # freed, reusable
        assert kept.file_bytes >= before.file_bytes  # and kept: under a quarter of the file
        clock.advance(DAY)  # now everything is old enough
        assert (await hub.retention.sweep()).messages == 1350
        await hub.search.follow()
        await hub.retention.sweep()
        after = await hub._db.size()
        assert after.file_bytes < kept.file_bytes / 2  # most of the file free: given back


@pytest.mark.sqlite_file
async def test_the_words_of_purged_messages_leave_their_queue_in_slices(tmp_path: Path) -> None:
    """ADR 0042: a purged message's words wait in `search_gone` until the index (its own file)
    has forgotten them; the room's writer then drops them a slice at a time (a round's purge
    dropped at once held it 31-39 ms at a million messages), and the size bound leaves them out
    meanwhile."""
    clock = SlowMachine()
    async with make_hub(
        tmp_path, clock=clock, send_rate_capacity=1e9, retention_age=DAY, retention_batch=500
    ) as hub:
        await acknowledged(hub, 600, " " + "y" * 400)
        await hub.search.follow()
        clock.advance(2 * DAY)
        held = await hub._db.size()
        assert (await hub.retention.sweep()).messages == 600
        db = hub.db_path
        assert db is not None
        assert queued(db) == 600
        assert (await hub._db.size()).used_bytes < held.used_bytes - 600 * 400  # left out
        clock.step = 0.01  # a slice past a stall: one a round
        await hub.search.follow()
        assert 0 < queued(db) < 600
        clock.step = 0.0
        await hub.search.follow()
        assert queued(db) == 0
        assert (await hub.search.search(None, "note")).hits == []


def queued(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        count: int = conn.execute("SELECT count(*) FROM search_gone").fetchone()[0]
    return count
