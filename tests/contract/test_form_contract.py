"""The storage contract for the operator's forms (issue 14: the contract first): a pending
form, an identical ask answered with the one already pending, the per-asker cap, settling once
(answer or cancel) with its messages routed in the same transaction and told who they reach,
two settlements racing, and the ledger bookkeeping (unrecorded answers, their hashes)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from caucus.domain.forms import Form, FormField, FormState, Reach
from caucus.domain.messages import NewMessage
from caucus.domain.names import Target, parse_target
from caucus.errors import CapOpenForms, Conflict, NotFound
from caucus.storage.base import Store
from tests.contract.test_store_contract import NOW, claim, peer

_ids = itertools.count(1)


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


class Told:
    """A `notify` that records the reach it was given and sends one message to the audience."""

    def __init__(self) -> None:
        self.reach: Reach | None = None

    def __call__(self, f: Form, reach: Reach) -> list[tuple[NewMessage, Target]]:
        self.reach = reach
        message = NewMessage(
            id=f"m_f{next(_ids)}",
            ts=NOW + 1,
            sender_id=0,
            sender="operator",
            to=f.audience,
            kind="form_answer",
            content=f"{f.title}: {f.answer}",
            meta={"form_id": f.id},
            joins_channel=False,
        )
        return [(message, parse_target(f.audience))]


async def settle(store: Store, form_id: str, state: FormState, told: Told | None = None) -> Any:
    answer = {"go": "yes"} if state is FormState.ANSWERED else None
    reason = "not needed" if state is FormState.CANCELED else None
    return await store.settle_form(
        form_id, state=state, answer=answer, reason=reason, now=NOW + 1, notify=told or Told()
    )


async def test_a_form_waits_and_an_identical_ask_gets_the_same_one(store: Store) -> None:
    alice = await peer(store, "alice")
    stored, existed = await store.create_form(form("alice"), asker_id=alice.id, max_pending=5)
    assert (stored.state, existed) == (FormState.PENDING, False)
    again, existed = await store.create_form(form("alice"), asker_id=alice.id, max_pending=5)
    assert (again.id, existed) == (stored.id, True)
    assert [f.id for f in await store.list_forms(FormState.PENDING)] == [stored.id]
    found = await store.get_form(stored.id)
    assert found is not None
    assert [f.key for f in found.fields] == ["go"]


async def test_the_cap_counts_one_askers_pending_forms(store: Store) -> None:
    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    await store.create_form(form("alice", "one"), asker_id=alice.id, max_pending=2)
    second, _ = await store.create_form(form("alice", "two"), asker_id=alice.id, max_pending=2)
    with pytest.raises(CapOpenForms):
        await store.create_form(form("alice", "three"), asker_id=alice.id, max_pending=2)
    await store.create_form(form("bob", "three"), asker_id=bob.id, max_pending=2)  # bob's own
    await settle(store, second.id, FormState.CANCELED)
    await store.create_form(form("alice", "three"), asker_id=alice.id, max_pending=2)


async def test_an_answer_settles_once_and_reaches_its_audience(store: Store) -> None:
    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    stored, _ = await store.create_form(form("alice"), asker_id=alice.id, max_pending=5)
    told = Told()
    answered, outcomes = await settle(store, stored.id, FormState.ANSWERED, told)
    assert (answered.state, answered.answer) == (FormState.ANSWERED, {"go": "yes"})
    assert told.reach == Reach(asker_present=True, asker_in_audience=True)  # "all" has her
    assert sorted(r.name for o in outcomes for r in o.recipients) == ["alice", "bob"]
    assert [d.message.kind for d in (await claim(store, bob)).deliveries] == ["form_answer"]
    with pytest.raises(Conflict):
        await settle(store, stored.id, FormState.CANCELED)
    with pytest.raises(NotFound):
        await settle(store, "f_ghost", FormState.ANSWERED)
    after = await store.get_form(stored.id)
    assert after is not None
    assert after.state is FormState.ANSWERED


async def test_two_settlements_racing_one_wins(store: Store) -> None:
    alice = await peer(store, "alice")
    await peer(store, "bob")
    stored, _ = await store.create_form(form("alice"), asker_id=alice.id, max_pending=5)
    results = await asyncio.gather(
        settle(store, stored.id, FormState.ANSWERED),
        settle(store, stored.id, FormState.CANCELED),
        return_exceptions=True,
    )
    assert sum(isinstance(r, Conflict) for r in results) == 1
    assert sum(not isinstance(r, BaseException) for r in results) == 1


async def test_answers_wait_for_the_ledger_until_marked(store: Store) -> None:
    alice = await peer(store, "alice")
    first, _ = await store.create_form(form("alice", "one"), asker_id=alice.id, max_pending=5)
    second, _ = await store.create_form(form("alice", "two"), asker_id=alice.id, max_pending=5)
    canceled, _ = await store.create_form(form("alice", "x"), asker_id=alice.id, max_pending=5)
    await settle(store, first.id, FormState.ANSWERED)
    await settle(store, second.id, FormState.ANSWERED)
    await settle(store, canceled.id, FormState.CANCELED)
    assert [f.id for f in await store.unrecorded_forms()] == [first.id, second.id]
    await store.mark_forms_recorded({first.id: "a" * 64})
    assert [f.id for f in await store.unrecorded_forms()] == [second.id]
    recorded = await store.get_form(first.id)
    assert recorded is not None
    assert recorded.decision_hash == "a" * 64
    await store.note_ledger_intents(["b" * 64, "c" * 64], NOW)
    assert await store.ledger_intents() == {"b" * 64, "c" * 64}
    await store.clear_ledger_intents()
    assert await store.ledger_intents() == set()
