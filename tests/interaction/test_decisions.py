"""Answered forms on the decision ledger: exactly once across crashes, never onto a ledger that
fails verification, in answer order, and announced on the operator's feed."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import httpx2

from caucus.domain.decisions import LedgerBreak
from caucus.ledger.commands import verify
from caucus.ledger.tail import newest_first
from caucus.ledger.verify import head_path
from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from tests.interaction.test_feed import next_of
from tests.interaction.test_forms import recorded
from tests.sse import read_events
from tests.storage_sql import Database, database_of, execute

ASKERS = itertools.count()
ONE = [{"key": "go", "label": "Go ahead", "type": "radio", "options": ["yes", "no"]}]


async def ask_and_answer(hub: Hub, title: str, answer: str = "yes") -> str:
    asker = await hub.principals.register(name=f"asker-{next(ASKERS)}")
    form = await hub.forms.ask(asker.peer, title, ONE)
    await hub.forms.answer(form.id, {"go": answer})
    return form.id


def form_ids_on(path: Path) -> list[str]:
    return [r["caucus"]["form_id"] for r in reversed(list(newest_first(path)))]


async def test_an_answer_noted_as_unrecorded_after_a_crash_is_not_recorded_twice(
    tmp_path: Path,
) -> None:
    async with make_hub(tmp_path) as hub:
        form_id = await ask_and_answer(hub, "Merge the branch?")
        digest = await recorded(hub, form_id)
        ledger, db = hub.decisions.path, database_of(hub)
    # The crash window: the record is on the ledger, the hub died before noting it.
    execute(db, "UPDATE forms SET decision_hash = NULL")
    async with make_hub(tmp_path) as hub:
        assert await recorded(hub, form_id) == digest
    assert form_ids_on(ledger) == [form_id]
    assert verify(ledger).code == 0


async def test_answers_the_ledger_never_got_are_recorded_on_the_next_start(
    tmp_path: Path,
) -> None:
    async with make_hub(tmp_path) as hub:
        first = await ask_and_answer(hub, "First question")
        await recorded(hub, first)
        ledger = hub.decisions.path
        good = ledger.read_bytes()
        ledger.write_bytes(good.replace(b"First question", b"Forged question"))
        second = await ask_and_answer(hub, "Second question")
        # Answered and delivered, but the tampered ledger is not appended to.
        assert await hub.decisions.record_pending() == 0
        assert (await hub.forms.get(second)).decision_hash is None
        status = await hub.decisions.status()
        assert status.intact is False
        assert status.broken == LedgerBreak(0, "content hash mismatch")
        assert "fails verification at record 0" in status.unrecorded_error
        assert ledger.read_bytes().count(b"\n") == 1
    ledger.write_bytes(good)  # the operator restores the ledger from a copy
    async with make_hub(tmp_path) as hub:
        await recorded(hub, second)
        assert (await hub.decisions.status()).intact is True
    assert form_ids_on(ledger) == [first, second]


async def test_many_answers_are_chained_in_the_order_they_were_given(tmp_path: Path) -> None:
    async with make_hub(tmp_path) as hub:
        asker = await hub.principals.register(name="asker")
        forms = [await hub.forms.ask(asker.peer, f"question {n}", ONE) for n in range(5)]
        more = await hub.principals.register(name="more")
        forms += [await hub.forms.ask(more.peer, f"question {n}", ONE) for n in range(5, 10)]
        await asyncio.gather(*[hub.forms.answer(f.id, {"go": "no"}) for f in forms])
        for form in forms:
            await recorded(hub, form.id)
        ledger = hub.decisions.path
        answered = sorted(
            [await hub.forms.get(f.id) for f in forms], key=lambda f: (f.updated_at, f.id)
        )
        hashes = {f.id: f.decision_hash for f in answered}
        one_writer = not hub._db.shared
    records = list(reversed(list(newest_first(ledger))))
    chained = [r["caucus"]["form_id"] for r in records]
    if one_writer:
        assert chained == [f.id for f in answered]
    else:  # several writers commit concurrent answers in an order their clocks do not fix
        assert sorted(chained) == sorted(f.id for f in answered)
    assert all(hashes[r["caucus"]["form_id"]] == r["hash"] for r in records)
    outcome = verify(ledger)
    assert (outcome.code, outcome.data["records"]) == (0, 10)


async def test_the_feed_shows_forms_and_decisions_as_they_happen(tmp_path: Path) -> None:
    async with make_hub(tmp_path) as hub, serve(hub) as url:
        asker = await hub.principals.register(name="alice")
        early = await hub.forms.ask(asker.peer, "Asked before the console opened", ONE)
        headers = {"Authorization": f"Bearer {hub.operator.token}"}
        async with (
            httpx2.AsyncClient(base_url=url, headers=headers, timeout=30) as http,
            http.stream("GET", "/operator/events") as response,
        ):
            events = read_events(response)
            snapshot = await next_of(events, "snapshot")
            assert [f["form_id"] for f in snapshot.data["forms"]] == [early.id]
            assert snapshot.data["floors"] == []
            later = await hub.forms.ask(asker.peer, "Asked while watching", ONE)
            asked = await next_of(events, "form")
            assert (asked.data["change"], asked.data["form"]["form_id"]) == ("asked", later.id)
            await hub.forms.answer(later.id, {"go": "yes"})
            skip = {"health", "message"}
            answered = await next_of(events, "form", skip)
            assert answered.data["change"] == "answered"
            decision = await next_of(events, "decision", skip)
            assert decision.data["index"] == 0
            assert decision.data["record"]["caucus"]["form_id"] == later.id


def _lag_the_checkpoint(hub_db: Database, ledger: Path, by: int) -> list[str]:
    """The state a kill -9 between a record's fsync and the checkpoint's move leaves: the last
    `by` records are on the ledger, the checkpoint names the one before them, and the database
    has not noted them on their forms. Returns the lagging records' hashes."""
    records = list(reversed(list(newest_first(ledger))))
    kept = records[-by - 1]
    head_path(ledger).write_text(
        json.dumps({"count": len(records) - by, "head_hash": kept["hash"]}) + "\n"
    )
    lagging = [r["hash"] for r in records[-by:]]
    execute(
        hub_db,
        "UPDATE forms SET decision_hash = NULL WHERE decision_hash = ?",
        [(h,) for h in lagging],
    )
    return lagging


async def _two_recorded(tmp_path: Path) -> tuple[str, str, Path, Database]:
    """Two answered forms on the ledger, the hub stopped: (their ids, the ledger, the db)."""
    async with make_hub(tmp_path) as hub:
        first = await ask_and_answer(hub, "First")
        await recorded(hub, first)
        second = await ask_and_answer(hub, "Second")
        await recorded(hub, second)
        ledger, db = hub.decisions.path, database_of(hub)
    return first, second, ledger, db


async def test_a_crash_between_the_fsync_and_the_checkpoint_heals_without_a_person(
    tmp_path: Path,
) -> None:
    first, second, ledger, db = await _two_recorded(tmp_path)
    lagging = _lag_the_checkpoint(db, ledger, by=1)
    # What the hub noted before it wrote the line:
    execute(db, "INSERT INTO ledger_intents VALUES (?, 0)", [(lagging[0],)])
    assert verify(ledger).code != 0  # as a person would find it
    async with make_hub(tmp_path) as hub:
        assert await recorded(hub, second) == lagging[0]  # noted again, not written again
        third = await ask_and_answer(hub, "Third")
        await recorded(hub, third)
        status = await hub.decisions.status()
        assert (status.intact, status.records) == (True, 3)
        assert status.recovered is not None
        assert (status.recovered.from_count, status.recovered.to_count) == (1, 2)
    assert form_ids_on(ledger) == [first, second, third]
    assert verify(ledger).code == 0
    assert [tuple(r) for r in execute(db, "SELECT COUNT(*) FROM ledger_intents")] == [(0,)]


async def test_a_record_past_the_checkpoint_the_hub_did_not_write_still_halts_it(
    tmp_path: Path,
) -> None:
    first, second, ledger, db = await _two_recorded(tmp_path)
    _lag_the_checkpoint(db, ledger, by=1)  # and no intent: someone else appended it
    async with make_hub(tmp_path) as hub:
        third = await ask_and_answer(hub, "Third")
        assert await hub.decisions.record_pending() == 0
        assert (await hub.forms.get(third)).decision_hash is None
        status = await hub.decisions.status()
        assert (status.intact, status.recovered) == (False, None)
        assert "head checkpoint mismatch" in (status.unrecorded_error or "")
    assert form_ids_on(ledger) == [first, second]


async def test_a_backlog_of_unrecorded_answers_is_recorded_whole_on_start(tmp_path: Path) -> None:
    async with make_hub(tmp_path) as hub:
        ids = [await ask_and_answer(hub, f"Question {n}") for n in range(130)]
        await recorded(hub, ids[-1])
        ledger, db = hub.decisions.path, database_of(hub)
    ledger.unlink()  # as if the ledger had been moved aside: every answer is unrecorded
    head_path(ledger).unlink()
    execute(db, "UPDATE forms SET decision_hash = NULL")
    async with make_hub(tmp_path) as hub:
        await recorded(hub, ids[-1])
        assert await hub.decisions.record_pending() == 0
    assert form_ids_on(ledger) == ids
