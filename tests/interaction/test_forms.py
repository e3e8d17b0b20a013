"""Operator forms over HTTP, the operator API and MCP: asking, listing, answering, canceling,
validation, who hears the answer, and the decision it becomes on the ledger."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx2
import pytest

from caucus.client import HubClient, InboundMessage
from caucus.domain.approvals import MAX_CALL_TEXT, ToolCallSubject, approve_option
from caucus.errors import CapOpenForms, Conflict, Forbidden, InvalidRequest
from caucus.ledger.commands import verify
from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from tests.conftest import ClientFactory, eventually

FIELDS: list[dict[str, Any]] = [
    {
        "key": "db",
        "label": "Database",
        "type": "radio",
        "options": ["sqlite", "postgres"],
        "required": True,
        "allow_other": True,
    },
    {"key": "envs", "label": "Environments", "type": "checkbox", "options": ["dev", "prod"]},
    {"key": "notes", "label": "Notes", "type": "textarea"},
]


async def drain(client: HubClient) -> list[InboundMessage]:
    """Everything waiting for `client` now (acknowledging as it goes)."""
    got: list[InboundMessage] = []
    while True:
        batch = await client.receive(timeout=0)
        if not batch.messages:
            return got
        got += batch.messages


def answers_in(messages: list[InboundMessage], form_id: str) -> list[InboundMessage]:
    return [
        m
        for m in messages
        if m.kind == "form_answer" and m.meta is not None and m.meta.get("form_id") == form_id
    ]


async def recorded(hub: Hub, form_id: str) -> str:
    """The hash of the form's ledger record, once the hub has written it."""
    found: dict[str, str | None] = {"hash": None}

    async def written() -> bool:
        form = await hub.forms.get(form_id)
        found["hash"] = form.decision_hash
        return form.decision_hash is not None

    await eventually(written, what=f"the answer to {form_id} on the ledger")
    assert found["hash"] is not None
    return found["hash"]


async def test_ask_list_answer_over_http_reaches_everyone_and_is_recorded(
    connect: ClientFactory, operator: OperatorClient, live_hub: Hub
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    assert await bob.forms() == []
    form = await alice.ask_operator("Which database for v2?", FIELDS)
    assert (form.state, form.to, form.asker) == ("pending", "all", "alice")
    assert [f.form_id for f in await bob.forms()] == [form.form_id]  # bob sees it: no re-ask
    again = await alice.ask_operator("Which database for v2?", FIELDS)
    assert again.form_id == form.form_id  # the same question is not asked twice
    snapshot = await operator.snapshot()
    assert [f.form_id for f in snapshot.forms] == [form.form_id]
    assert [f.form_id for f in await operator.forms()] == [form.form_id]

    answered = await operator.answer_form(
        form.form_id, {"db": "postgres", "envs": ["dev", "prod"], "notes": "go"}
    )
    assert answered.state == "answered"
    assert answered.decision_hash is not None  # recorded before the answer returns
    assert answered.answer == {"db": "postgres", "envs": ["dev", "prod"], "notes": "go"}
    for client in (alice, bob):
        (got,) = answers_in(await drain(client), form.form_id)
        assert got.sender == "operator"
        assert "Database: postgres" in got.content
        assert got.meta is not None
        assert got.meta["answers"]["envs"] == ["dev", "prod"]
    assert await bob.forms() == []
    assert await operator.forms() == []

    digest = answered.decision_hash
    (decision,) = await bob.decisions()
    assert decision.hash == digest
    assert decision.subject == "Which database for v2?"
    assert decision.decision == "Database: postgres; Environments: dev, prod; Notes: go"
    assert decision.model_extra is not None
    assert decision.model_extra["caucus"]["form_id"] == form.form_id
    assert (await operator.decisions())[0].hash == digest
    outcome = verify(live_hub.decisions.path)
    assert (outcome.code, outcome.data["records"], outcome.data["anchored"]) == (0, 1, True)
    status = await operator.ledger()
    assert (status.records, status.intact, status.head_hash) == (1, True, digest)


async def test_the_whole_round_trip_over_mcp(url: str, live_hub: Hub) -> None:
    from mcp import Client

    from tests.mcptools import call, fail

    async with (
        Client(f"{url}/mcp", mode="legacy") as alice,
        Client(f"{url}/mcp", mode="legacy") as bob,
        OperatorClient(url, token=live_hub.operator.token) as operator,
    ):
        await call(alice, "join", name="alice")
        await call(bob, "join", name="bob")
        assert (await call(bob, "ask_operator"))["forms"] == []  # nothing waits yet
        asked = await call(alice, "ask_operator", title="Ship on Friday?", fields=FIELDS[:1])
        (form,) = asked["forms"]
        assert (form["title"], form["state"], form["to"]) == ("Ship on Friday?", "pending", "all")
        assert [f["type"] for f in form["fields"]] == ["radio"]
        (seen,) = (await call(bob, "ask_operator"))["forms"]
        assert (seen["form_id"], seen["asker"]) == (form["form_id"], "alice")
        assert (await fail(alice, "ask_operator", title="No fields?"))[0] == "invalid_request"
        await operator.answer_form(form["form_id"], {"db": "a third option"})  # allow_other
        for client in (alice, bob):
            (heard,) = (await call(client, "listen", timeout=5))["messages"]
            assert heard["kind"] == "form_answer"
            assert heard["meta"]["answers"] == {"db": "a third option"}
        await recorded(live_hub, form["form_id"])
        (decided,) = (await call(bob, "decisions"))["decisions"]
        assert (decided["subject"], decided["decision"]) == (
            "Ship on Friday?",
            "Database: a third option",
        )
        assert decided["caucus"]["form_id"] == form["form_id"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ([{"key": "x", "type": "radio"}], "fields[0].options"),
        ([{"key": "x", "type": "checkbox", "options": []}], "fields[0].options"),
        ([{"key": "x", "type": "text", "options": ["a"]}], "fields[0].options"),
        ([{"key": "x", "type": "textarea", "allow_other": True}], "fields[0].allow_other"),
        ([{"key": "x", "type": "dropdown", "options": ["a"]}], "fields[0].type"),
        ([{"key": "x", "type": "text"}, {"key": "x", "type": "text"}], "fields[1].key"),
        ([{"key": "no spaces", "type": "text"}], "fields[0].key"),
        ([{"key": "x", "type": "radio", "options": ["a", "a"]}], "fields[0].options"),
        ([{"key": f"k{i}", "type": "text"} for i in range(21)], "fields"),
        ([{"key": "x", "type": "radio", "options": ["o"] * 21}], "fields[0].options"),
        ([], "fields"),
    ],
)
async def test_malformed_forms_are_refused_with_the_field_named(
    connect: ClientFactory, operator: OperatorClient, fields: list[dict[str, Any]], field: str
) -> None:
    alice = await connect("alice")
    with pytest.raises(InvalidRequest) as caught:
        await alice.ask_operator("A question", fields)
    assert caught.value.status == 422
    if fields:  # an empty list fails the wire model before the domain sees it
        assert caught.value.extra["field"] == field
    assert await operator.forms() == []


async def test_titles_and_audiences_are_checked(connect: ClientFactory) -> None:
    alice = await connect("alice")
    await connect("bob")
    one = [{"key": "x", "type": "text"}]
    for title in ("", "   ", "t" * 201):
        with pytest.raises(InvalidRequest):
            await alice.ask_operator(title, one)
    with pytest.raises(InvalidRequest) as caught:
        await alice.ask_operator("to a peer?", one, to="bob")
    assert caught.value.extra["field"] == "to"
    with pytest.raises(Forbidden):
        await alice.ask_operator("for a channel I am not in", one, to="#ops")


@pytest.mark.parametrize(
    ("answers", "field"),
    [
        ({}, "answers.db"),  # a required field left out
        ({"db": "   "}, "answers.db"),  # blank is not an answer
        ({"db": "sqlite", "envs": ["staging"]}, "answers.envs[0]"),  # not an option
        ({"db": "sqlite", "envs": "dev"}, "answers.envs"),  # a checkbox takes a list
        ({"db": "sqlite", "envs": ["dev", "dev"]}, "answers.envs"),
        ({"db": "sqlite", "extra": "?"}, "answers.extra"),  # no such field
        ({"db": "sqlite", "notes": "n" * 8001}, "answers.notes"),
        ({"db": ["sqlite"]}, "answers.db"),  # a radio takes one string
    ],
)
async def test_answers_that_do_not_fit_the_form_are_refused_and_it_stays_pending(
    connect: ClientFactory,
    operator: OperatorClient,
    answers: dict[str, Any],
    field: str,
) -> None:
    alice = await connect("alice")
    form = await alice.ask_operator("Which database?", FIELDS)
    with pytest.raises(InvalidRequest) as caught:
        await operator.answer_form(form.form_id, answers)
    assert (caught.value.status, caught.value.extra["field"]) == (422, field)
    assert (await operator.form(form.form_id)).state == "pending"
    assert answers_in(await drain(alice), form.form_id) == []


async def test_a_channel_form_is_seen_and_answered_in_the_channel_only(
    connect: ClientFactory, operator: OperatorClient, live_hub: Hub
) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    await alice.join_channel("#ops")
    await bob.join_channel("#ops")
    form = await alice.ask_operator("Roll back the deploy?", FIELDS[:1], to="#ops")
    assert [f.form_id for f in await bob.forms()] == [form.form_id]
    assert await carol.forms() == []
    broadcast = await carol.ask_operator("Lunch?", [{"key": "where", "type": "text"}])
    await operator.answer_form(form.form_id, {"db": "sqlite"})
    await operator.answer_form(broadcast.form_id, {"where": "canteen"})
    assert len(answers_in(await drain(alice), form.form_id)) == 1
    assert len(answers_in(await drain(bob), form.form_id)) == 1
    assert answers_in(await drain(carol), form.form_id) == []
    await recorded(live_hub, form.form_id)
    await recorded(live_hub, broadcast.form_id)
    assert {d.subject for d in await bob.decisions()} == {"Roll back the deploy?", "Lunch?"}
    assert [d.subject for d in await carol.decisions()] == ["Lunch?"]
    assert len(await operator.decisions()) == 2
    assert [d.subject for d in await carol.decisions(limit=1)] == ["Lunch?"]


async def test_an_asker_who_left_the_channel_still_gets_the_answer_exactly_once(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.join_channel("#ops")
    await bob.join_channel("#ops")
    form = await alice.ask_operator("Which database?", FIELDS[:1], to="#ops")
    await alice.leave_channel("#ops")
    await drain(alice)
    await operator.answer_form(form.form_id, {"db": "sqlite"})
    (copy,) = answers_in(await drain(alice), form.form_id)
    assert copy.to == "alice"
    (heard,) = answers_in(await drain(bob), form.form_id)
    assert heard.to == "#ops"


async def test_the_operator_cancels_and_the_asker_is_told(
    connect: ClientFactory, operator: OperatorClient, live_hub: Hub
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    form = await alice.ask_operator("Which database?", FIELDS)
    canceled = await operator.cancel_form(form.form_id, "decided in the meeting")
    assert (canceled.state, canceled.reason) == ("canceled", "decided in the meeting")
    (told,) = [m for m in await drain(alice) if m.kind == "form_canceled"]
    assert "decided in the meeting" in told.content
    assert [m for m in await drain(bob) if m.kind.startswith("form_")] == []
    with pytest.raises(Conflict):
        await operator.answer_form(form.form_id, {"db": "sqlite"})
    with pytest.raises(Conflict):
        await operator.cancel_form(form.form_id)
    assert await alice.forms() == []
    # Declining to answer is a decision too: on the ledger, and in /decisions, as canceled.
    assert canceled.decision_hash is not None
    assert await live_hub._db.read(lambda r: r.forms.unrecorded()) == []
    for reader in (operator, alice):
        (record,) = await reader.decisions()
        assert record.subject == "Which database?"
        assert record.decision == "canceled: decided in the meeting"
        assert record.positions[0]["stance"] == "canceled"
        assert record.hash == canceled.decision_hash


async def test_racing_answers_have_one_winner(
    connect: ClientFactory, operator: OperatorClient, live_hub: Hub
) -> None:
    alice = await connect("alice")
    form = await alice.ask_operator("Which database?", FIELDS[:1])
    outcomes = await asyncio.gather(
        operator.answer_form(form.form_id, {"db": "sqlite"}),
        operator.answer_form(form.form_id, {"db": "postgres"}),
        operator.cancel_form(form.form_id),
        return_exceptions=True,
    )
    winners = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(winners) == 1
    assert all(isinstance(o, Conflict) for o in outcomes if isinstance(o, BaseException))
    settled = [m for m in await drain(alice) if m.kind.startswith("form_")]
    assert len(settled) == 1
    if winners[0].state == "answered":
        await recorded(live_hub, form.form_id)
        assert len(await operator.decisions()) == 1


async def test_an_asker_may_have_five_forms_pending(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice = await connect("alice")
    one = [{"key": "x", "type": "text"}]
    forms = [await alice.ask_operator(f"question {n}", one) for n in range(5)]
    with pytest.raises(CapOpenForms) as caught:
        await alice.ask_operator("question 6", one)
    assert (caught.value.status, caught.value.code) == (429, "cap_open_forms")
    await operator.answer_form(forms[0].form_id, {"x": "done"})
    await alice.ask_operator("question 6", one)


async def test_the_wire_refuses_bad_shapes_with_invalid_request(
    url: str, connect: ClientFactory, live_hub: Hub
) -> None:
    alice = await connect("alice")
    form = await alice.ask_operator("Which database?", FIELDS)
    headers = {"Authorization": f"Bearer {live_hub.operator.token}"}
    async with httpx2.AsyncClient(base_url=url, headers=headers) as http:
        for path, body in [
            (f"/operator/forms/{form.form_id}/answer", {"answers": "postgres"}),
            (f"/operator/forms/{form.form_id}/answer", {"answers": {"db": 1}}),
            ("/operator/forms/f_unknown/answer", {"answers": {}}),
        ]:
            response = await http.post(path, json=body)
            assert response.status_code in (404, 422), response.text
            assert response.json()["error"] in ("not_found", "invalid_request")
        listing = await http.get("/operator/forms", params={"state": "later"})
        assert (listing.status_code, listing.json()["field"]) == (422, "state")
        everything = await http.get("/operator/forms", params={"state": "all"})
        assert [f["form_id"] for f in everything.json()["forms"]] == [form.form_id]
    with pytest.raises(InvalidRequest):
        await alice.decisions(limit=0)


async def test_pending_forms_survive_a_restart(tmp_path: Path) -> None:
    from caucus.testing import make_hub

    async with make_hub(tmp_path) as hub:
        alice = await hub.principals.register(name="alice")
        form = await hub.forms.ask(alice.peer, "Still there?", FIELDS[:1])
    async with make_hub(tmp_path) as hub:
        (pending,) = await hub.forms.listing()
        assert (pending.id, pending.fields) == (form.id, form.fields)
        answered = await hub.forms.answer(form.id, {"db": "sqlite"})
        assert answered.answer == {"db": "sqlite"}


def approval(arguments: dict[str, Any], option_for: ToolCallSubject | None = None) -> Any:
    subject = ToolCallSubject("shell", arguments, {}, {"destructiveHint": True})
    digest = (option_for or subject).digest()
    field = {"key": "decision", "type": "radio", "options": [approve_option(digest), "deny"]}
    return subject, [field]


async def test_a_form_carrying_a_call_must_offer_to_approve_exactly_that_call(
    connect: ClientFactory, operator: OperatorClient, live_hub: Hub
) -> None:
    agent = await connect("agent")
    subject, fields = approval({"command": "ls"})
    form = await agent.ask_operator("agent asks to run shell", fields, call=subject.record())
    assert form.call is not None
    assert (form.call.sha256, form.call.canonical) == (subject.digest(), subject.canonical())

    # Another call's digest, or none at all, or two approve options: refused, nothing stored.
    other = ToolCallSubject("shell", {"command": "ls -la"})
    for fields in (
        approval({"command": "rm -rf ~/"}, option_for=other)[1],
        [{"key": "decision", "type": "radio", "options": ["yes", "deny"]}],
        [
            {
                "key": "decision",
                "type": "radio",
                "options": [approve_option(subject.digest()), approve_option(other.digest())],
            }
        ],
    ):
        with pytest.raises(InvalidRequest, match="exactly one approve option"):
            await agent.ask_operator("sneaky", fields, call={"tool": "shell", "arguments": {}})
    # A call too long to be shown whole is not put to the operator at all.
    big, fields = approval({"content": "x" * (MAX_CALL_TEXT + 1)})
    with pytest.raises(InvalidRequest, match="whole"):
        await agent.ask_operator("agent asks to run shell", fields, call=big.record())
    assert [f.form_id for f in await operator.forms()] == [form.form_id]

    answered = await operator.answer_form(
        form.form_id, {"decision": approve_option(subject.digest())}
    )
    (record,) = await operator.decisions()
    assert record.hash == answered.decision_hash
    assert record.model_extra is not None
    assert record.model_extra["caucus"]["call"] == {
        "canonical": subject.canonical(),
        "sha256": subject.digest(),
    }
