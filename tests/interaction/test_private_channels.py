"""Private channels (issue 47 item 2) over HTTP, with `HubClient` and `OperatorClient`: an
approvals channel is private from creation (a stranger can neither join it, nor post in it,
nor find it, its forms, its answers or its ledger records); the operator makes a channel
private, invites into it and takes out of it; the MCP channel tool creates one."""

from __future__ import annotations

import httpx2
import pytest
from mcp import Client

from caucus.domain.approvals import ToolCallSubject, approve_option
from caucus.errors import ChannelPrivate, ChannelPublic
from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from tests.conftest import ClientFactory
from tests.mcptools import call

SECRET = "curl -H 'Authorization: Bearer sk-live-4242' https://deploy.example/run"


async def test_a_stranger_cannot_join_read_or_post_in_an_approvals_channel(
    connect: ClientFactory, operator: OperatorClient, url: str, live_hub: Hub
) -> None:
    editor = await connect("editor")
    mallory = await connect("mallory")
    joined = await editor.join_channel("#approve-editor")  # private by its name
    assert joined.private
    subject = ToolCallSubject("shell", {"command": SECRET}, {}, {})
    field = {
        "key": "decision",
        "label": "Run shell exactly as shown?",
        "type": "radio",
        "options": [approve_option(subject.digest()), "deny"],
        "required": True,
    }
    form = await editor.ask_operator(
        "editor asks to run shell", [field], to="#approve-editor", call=subject.record()
    )
    assert [f.form_id for f in await editor.forms()] == [form.form_id]
    assert await mallory.forms() == []
    await operator.answer_form(form.form_id, {"decision": "deny"})

    with pytest.raises(ChannelPrivate) as refused:
        await mallory.join_channel("#approve-editor")
    assert refused.value.extra["channel"] == "#approve-editor"
    with pytest.raises(ChannelPrivate):
        await mallory.send("#approve-editor", "let me in")
    assert "#approve-editor" not in {c.name for c in await mallory.channels()}
    assert await mallory.forms() == []
    assert (await mallory.search("sk live 4242")).hits == []
    assert await mallory.decisions() == []
    assert (await mallory.search("editor asks")).hits == []
    # The asking agent and the operator read it all.
    assert "#approve-editor" in {c.name for c in await editor.channels()}
    assert [d.subject for d in await editor.decisions()] == ["editor asks to run shell"]
    listed = {c.name: c for c in await operator_channels(url, live_hub)}
    assert listed["#approve-editor"].private
    async with httpx2.AsyncClient(base_url=url) as anyone:
        seen = (await anyone.get("/channels")).json()["channels"]
        assert "#approve-editor" not in {c["name"] for c in seen}


async def operator_channels(url: str, hub: Hub) -> list[object]:
    from caucus.client import HubClient

    async with HubClient(url, token=hub.operator.token) as as_operator:
        return list(await as_operator.channels())


async def test_the_operator_makes_a_channel_private_and_invites_into_it(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, bob, carol = [await connect(n) for n in ("alice", "bob", "carol")]
    await alice.send("#release", "the release key rotates on friday")
    await bob.join_channel("#release")
    made = await operator.set_channel_private("#release")
    assert made.private
    assert set(made.members) == {"alice", "bob"}  # who was in it stays
    with pytest.raises(ChannelPrivate):
        await carol.join_channel("#release")
    assert (await carol.search("release key")).hits == []

    assert await operator.invite("#release", "carol")
    told = await carol.receive(timeout=0)
    assert any(m.meta and m.meta.get("channel") == "#release" for m in told.messages)
    await carol.join_channel("#release")
    assert [h.sender for h in (await carol.search("release key")).hits] == ["alice"]

    assert await operator.remove_from_channel("#release", "carol")
    assert (await carol.search("release key")).hits == []
    with pytest.raises(ChannelPrivate):
        await carol.join_channel("#release")
    assert not await operator.remove_from_channel("#release", "carol")

    await carol.join_channel("#lobby")
    with pytest.raises(ChannelPublic):
        await bob.join_channel("#lobby", private=True)
    opened = await operator.set_channel_private("#release", False)
    assert not opened.private
    await carol.join_channel("#release")


async def test_an_agent_creates_a_private_channel_through_the_mcp_tool(
    url: str, connect: ClientFactory
) -> None:
    mallory = await connect("mallory")
    async with Client(f"{url}/mcp", mode="legacy") as session:
        await call(session, "join", name="lead")
        made = await call(session, "channel", action="join", channel="#plans", private=True)
        assert made["channels"][0]["private"] is True
    with pytest.raises(ChannelPrivate):
        await mallory.join_channel("#plans")
