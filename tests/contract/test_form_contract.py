"""The contract for the operator's forms, run against each backend: the repository (a pending
form found again by its identical twin, counted per asker, settled once even when two settle
at once, the ledger bookkeeping) and the rules above it, which the form service applies in one
unit of work (the cap, the answer routed to its audience and to an asker outside it, a
cancellation told to the asker, one winner when two operators race)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from caucus.domain.forms import Form, FormField, FormState
from caucus.domain.peers import Peer
from caucus.errors import CapOpenForms, Conflict, NotFound
from caucus.services.hub import Hub
from caucus.storage.engine import Engine
from tests.contract.conftest import NOW, RoomFactory
from tests.contract.test_store_contract import peer

_ids = itertools.count(1)
GO = [{"key": "go", "label": "Go?", "type": "radio", "options": ["yes", "no"], "required": True}]


def form(asker: str, title: str = "Ship it?", audience: str = "all") -> Form:
    return Form(
        id=f"f_{next(_ids)}",
        asker=asker,
        audience=audience,
        title=title,
        fields=[FormField("go", "Go?", "radio", ("yes", "no"), required=True)],
        state=FormState.PENDING,
        created_at=NOW,
        updated_at=NOW,
    )


async def stored(db: Engine, asker: Peer, title: str = "Ship it?") -> Form:
    new = form(asker.name, title)
    await db.write(lambda r: r.forms.insert(new, asker.id))
    return new


async def settle(db: Engine, form_id: str, state: FormState) -> bool:
    answer: dict[str, Any] | None = {"go": "yes"} if state is FormState.ANSWERED else None
    return await db.write(lambda r: r.forms.settle(form_id, state, answer, None, NOW + 1))


# --- the repository --------------------------------------------------------------------------
async def test_a_pending_form_is_found_by_its_twin_and_counted(db: Engine) -> None:
    alice, bob = await peer(db, "alice"), await peer(db, "bob")
    first = await stored(db, alice)
    twin = await db.read(lambda r: r.forms.same_pending(form("alice"), alice.id))
    assert twin is not None
    assert twin.id == first.id
    assert [f.key for f in twin.fields] == ["go"]
    other = form("alice", "Something else?")
    assert await db.read(lambda r: r.forms.same_pending(other, alice.id)) is None
    assert await db.read(lambda r: r.forms.same_pending(form("bob"), bob.id)) is None
    await stored(db, alice, "two")
    assert await db.read(lambda r: r.forms.pending_count(alice.id)) == 2
    assert await db.read(lambda r: r.forms.pending_count(bob.id)) == 0
    listed = await db.read(lambda r: r.forms.listed(FormState.PENDING))
    assert [f.title for f in listed] == ["Ship it?", "two"]


async def test_a_form_settles_once_even_when_two_settle_at_once(db: Engine) -> None:
    alice = await peer(db, "alice")
    for _ in range(5):
        pending = await stored(db, alice)
        won = await asyncio.gather(
            settle(db, pending.id, FormState.ANSWERED), settle(db, pending.id, FormState.CANCELED)
        )
        assert sorted(won) == [False, True]
    # Which one wins is the database's to decide (several writers on PostgreSQL); the form
    # ends as the winner left it.
    found = await db.read(lambda r: r.forms.with_asker(pending.id))
    assert found is not None
    winner = FormState.ANSWERED if won[0] else FormState.CANCELED
    assert (found[0].state, found[1]) == (winner, alice.id)
    assert found[0].answer == ({"go": "yes"} if won[0] else None)


async def test_settled_forms_wait_for_the_ledger_until_marked(db: Engine) -> None:
    alice = await peer(db, "alice")
    first, second = await stored(db, alice, "one"), await stored(db, alice, "two")
    canceled = await stored(db, alice, "x")
    await settle(db, first.id, FormState.ANSWERED)
    await settle(db, second.id, FormState.ANSWERED)
    await settle(db, canceled.id, FormState.CANCELED)
    unrecorded = await db.read(lambda r: r.forms.unrecorded())
    assert [f.id for f in unrecorded] == [first.id, second.id, canceled.id]  # canceled: too
    await db.write(lambda r: r.forms.mark_recorded({first.id: "a" * 64}))
    left = await db.read(lambda r: r.forms.unrecorded())
    assert [f.id for f in left] == [second.id, canceled.id]
    recorded = await db.read(lambda r: r.forms.get(first.id))
    assert recorded is not None
    assert recorded.decision_hash == "a" * 64
    await db.write(lambda r: r.ledger.note(["b" * 64, "c" * 64], NOW))
    assert await db.read(lambda r: r.ledger.all()) == {"b" * 64, "c" * 64}
    await db.write(lambda r: r.ledger.clear())
    assert await db.read(lambda r: r.ledger.all()) == set()


# --- the rules above it, over each backend --------------------------------------------------
async def join(room: Hub, name: str) -> Peer:
    return (await room.principals.register(name=name)).peer


async def kinds(room: Hub, p: Peer) -> list[str]:
    return [d.message.kind for d in (await room.delivery.receive(p, wait=0)).deliveries]


async def test_an_identical_ask_gets_the_same_form_and_the_cap_counts_one_asker(
    rooms: RoomFactory,
) -> None:
    room = await rooms(pending_forms_max=2)
    alice, bob = await join(room, "alice"), await join(room, "bob")
    first = await room.forms.ask(alice, "one", GO)
    assert (await room.forms.ask(alice, "one", GO)).id == first.id
    await room.forms.ask(alice, "two", GO)
    with pytest.raises(CapOpenForms):
        await room.forms.ask(alice, "three", GO)
    await room.forms.ask(bob, "three", GO)  # bob's own count
    await room.forms.cancel(first.id)
    await room.forms.ask(alice, "three", GO)


async def test_an_answer_settles_once_and_reaches_its_audience(room: Hub) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    asked = await room.forms.ask(alice, "Ship it?", GO)
    answered = await room.forms.answer(asked.id, {"go": "yes"})
    assert (answered.state, answered.answer) == (FormState.ANSWERED, {"go": "yes"})
    assert answered.decision_hash is not None  # recorded on the ledger
    assert await kinds(room, bob) == ["form_answer"]
    assert await kinds(room, alice) == ["form_answer"]  # "all" has her: no second copy
    with pytest.raises(Conflict):
        await room.forms.cancel(asked.id)
    with pytest.raises(NotFound):
        await room.forms.answer("f_ghost", {"go": "yes"})


async def test_an_asker_outside_the_audience_gets_a_copy_and_a_cancel_tells_it(
    room: Hub,
) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    await room.channels.join(alice, "#ops")
    await room.channels.join(bob, "#ops")
    asked = await room.forms.ask(alice, "Deploy?", GO, to="#ops")
    await room.channels.leave(alice, "#ops")
    await room.forms.answer(asked.id, {"go": "no"})
    assert await kinds(room, bob) == ["form_answer"]
    assert await kinds(room, alice) == ["form_answer"]  # a direct copy
    dropped = await room.forms.ask(alice, "Later?", GO)
    await room.forms.cancel(dropped.id, "not needed")
    assert await kinds(room, alice) == ["form_canceled"]
    assert await kinds(room, bob) == []  # a cancellation is the asker's alone


async def test_two_operators_racing_one_wins(room: Hub) -> None:
    alice = await join(room, "alice")
    await join(room, "bob")
    asked = await room.forms.ask(alice, "Ship it?", GO)
    results = await asyncio.gather(
        room.forms.answer(asked.id, {"go": "yes"}),
        room.forms.cancel(asked.id),
        return_exceptions=True,
    )
    assert sum(isinstance(r, Conflict) for r in results) == 1
    assert sum(isinstance(r, Form) for r in results) == 1
