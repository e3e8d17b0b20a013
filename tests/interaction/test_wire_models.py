"""One vocabulary per noun: each wire model reads the same through every surface.

For every noun the hub answers with (message, peer, task, offer, form, floor, channel, room
state, ledger status, send receipt, decision), the same value is read four ways: built
in-process by its constructor, as raw JSON over HTTP, parsed by `HubClient`, and as the
structured content of an MCP tool. The first three must agree, the MCP one must be that tool's
view of the same value (`mcp/views.py`: some fields, times in ISO 8601), and the raw JSON must
carry exactly the model's fields, so a field added to one surface and not the others fails
here.

The hub runs on a fake clock, so ages and timestamps read the same on every surface.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel

from caucus.api.mcp.local_port import LocalPort
from caucus.client import HubClient
from caucus.mcp import views as v
from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from caucus.testing import FakeClock, make_hub, serve
from caucus.wire.forms import DecisionRecord, FormInfo, LedgerStatusInfo
from caucus.wire.messages import InboundMessage, SendResult
from caucus.wire.peers import PeerInfo
from caucus.wire.room import ChannelInfo, FloorInfo, RoomState
from caucus.wire.verbs import identity, room, work
from caucus.wire.work import OfferInfo, TaskInfo
from tests.mcptools import call


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Hub, str]]:
    async with (
        make_hub(tmp_path, clock=FakeClock(), send_rate_capacity=1000) as hub,
        serve(hub) as url,
    ):
        yield hub, url


def same(
    model: type[BaseModel],
    raw: dict[str, Any],
    *views: BaseModel | dict[str, Any],
    mcp: tuple[v.View, dict[str, Any]] | None = None,
) -> None:
    """`raw` (the HTTP body) has exactly `model`'s fields, every view equals it, and the MCP
    tool's structured content is its view of it."""
    assert set(raw) == set(model.model_fields), (
        f"{model.__name__}: {set(raw) ^ set(model.model_fields)}"
    )
    for view in views:
        data = view.model_dump(mode="json") if isinstance(view, BaseModel) else view
        assert data == raw, model.__name__
    if mcp is not None:
        shown, structured = mcp
        assert structured == shown.of(raw, item=shown is not v.FLOOR), model.__name__


def item(view: v.View, field: str) -> v.View:
    """The view of each item of a result's list `field`."""
    kind = view.fields[field]
    assert isinstance(kind, v.Items)
    return kind.view


async def test_every_wire_noun_reads_the_same_on_every_surface(served: tuple[Hub, str]) -> None:
    hub, url = served
    async with (
        HubClient(url) as alice,
        HubClient(url) as bob,
        OperatorClient(url, token=hub.operator.token) as operator,
        httpx2.AsyncClient(base_url=url) as http,
        Client(f"{url}/mcp", mode="legacy") as carol_mcp,
    ):
        await alice.register("alice", skills=["sql", {"id": "go", "name": "Go", "tags": ["x"]}])
        await bob.register("bob")
        await call(carol_mcp, "join", name="carol")
        local = LocalPort(hub, token=alice.token)
        auth = {"Authorization": f"Bearer {bob.token}"}
        operator_auth = {"Authorization": f"Bearer {hub.operator.token}"}

        async def get(path: str, headers: dict[str, str] = auth, **params: Any) -> Any:
            response = await http.get(path, headers=headers, params=params)
            assert response.status_code == 200, response.text
            return response.json()

        async def post(path: str, body: Any, headers: dict[str, str] = auth) -> Any:
            response = await http.post(path, headers=headers, json=body)
            assert response.status_code == 200, response.text
            return response.json()

        # peer
        raw = await get("/ping", peer="alice")
        mcp = (await call(carol_mcp, "peers", name="alice"))["peers"][0]
        same(
            PeerInfo,
            raw,
            await bob.ping("alice"),
            await local.verb(identity.PING, peer="alice"),
            mcp=(item(v.PEERS, "peers"), mcp),
        )

        # channel
        await alice.join_channel("#ops")
        await alice.set_topic("#ops", "deploys")
        (raw,) = (await get("/channels"))["channels"]
        (mcp,) = (await call(carol_mcp, "channel", action="list"))["channels"]
        (client_view,) = await bob.channels()
        same(
            ChannelInfo,
            raw,
            client_view,
            (await local.verb(room.CHANNELS)).channels[0],
            mcp=(item(v.CHANNELS, "channels"), mcp),
        )

        # send receipt, from each surface's own send
        sent_http = await post("/send", {"to": "alice", "content": "one"})
        sent_client = await bob.send("alice", "two")
        sent_local = await local.say("bob", "three", None, None)
        sent_mcp = await call(carol_mcp, "say", to="bob", content="four")
        for sent in (sent_client, sent_local):
            assert set(sent.model_dump()) == set(sent_http)
        assert set(sent_mcp) == set(v.SENT.of(sent_http))  # each its own send
        same(SendResult, sent_http, SendResult.model_validate(sent_http))

        # message: one broadcast, received four ways by four recipients
        dan = HubClient(url)
        await dan.register("dan")
        broadcast = await alice.send("all", "to everyone", thread="news", meta={"k": [1, "v"]})
        raw = [
            m for m in (await get("/receive", timeout=0))["messages"] if m["seq"] == broadcast.seq
        ]
        client_msgs = [m for m in (await dan.receive(timeout=0)).messages if m.seq == broadcast.seq]
        heard = (await call(carol_mcp, "listen", timeout=0))["messages"]
        mcp_msgs = [m for m in heard if m["seq"] == broadcast.seq]
        (raw_msg,) = raw
        same(InboundMessage, raw_msg, client_msgs[0], mcp=(item(v.HEARD, "messages"), mcp_msgs[0]))
        await dan.aclose()

        # task
        task = await alice.send_task("bob", "check the logs", subject="logs")
        raw = await get(f"/tasks/{task.task_id}")
        local_bob = LocalPort(hub, token=bob.token)
        bearer = httpx2.AsyncClient(headers=auth)
        async with Client(streamable_http_client(f"{url}/mcp", http_client=bearer)) as bob_mcp:
            status = await call(bob_mcp, "task", action="status", task_id=task.task_id)
        await bearer.aclose()
        same(
            TaskInfo,
            raw,
            task,
            await bob.task_status(task.task_id),
            await local_bob.verb(work.TASK_STATUS, task_id=task.task_id),
            mcp=(item(v.TASKS, "tasks"), status["tasks"][0]),
        )
        raw_list = (await get("/tasks", role="received"))["tasks"]
        assert raw_list == [raw]

        # offer
        offer = await alice.post_offer("review the RFC", subject="rfc", required_skills=["sql"])
        await bob.claim_offer(offer.offer_id, "me")
        (raw,) = (await get("/offers"))["offers"]
        (mcp,) = (await call(carol_mcp, "offer", action="list"))["offers"]
        same(
            OfferInfo,
            raw,
            (await bob.list_offers())[0],
            (await local.verb(work.LIST_OFFERS)).offers[0],
            mcp=(item(v.OFFERS, "offers"), mcp),
        )

        # floor
        await alice.floor("take", "#ops", "deploying")
        raw = await post("/floor", {"action": "status", "scope": "#ops"})
        await call(carol_mcp, "channel", action="join", channel="#ops")
        mcp = await call(carol_mcp, "floor", action="status", scope="#ops")
        same(
            FloorInfo,
            raw,
            await bob.floor("status", "#ops"),
            await local.verb(room.FLOOR, action="status", scope="#ops"),
            mcp=(v.FLOOR, mcp),
        )

        # form
        form = await alice.ask_operator(
            "Ship?", [{"key": "go", "type": "radio", "options": ["y", "n"]}]
        )
        (raw,) = (await get("/forms"))["forms"]
        (mcp,) = (await call(carol_mcp, "ask_operator"))["forms"]
        same(
            FormInfo,
            raw,
            form,
            (await bob.forms())[0],
            (await local.verb(room.FORMS)).forms[0],
            mcp=(item(v.FORMS, "forms"), mcp),
        )

        # decision
        await operator.answer_form(form.form_id, {"go": "y"})
        await hub.decisions.record_pending()
        (raw,) = (await get("/decisions"))["decisions"]
        (mcp,) = (await call(carol_mcp, "decisions"))["decisions"]
        assert set(DecisionRecord.model_fields) < set(raw)  # the format's fields, and `caucus`
        for view in (
            (await bob.decisions())[0],
            (await local.verb(room.DECISIONS, limit=20)).decisions[0],
        ):
            assert view.model_dump(mode="json") == raw
        assert mcp == item(v.DECISIONS, "decisions").of(raw, item=True)

        # room state and ledger status (the operator's)
        raw = await get("/operator/state", headers=operator_auth)
        same(RoomState, raw, await operator.state(), RoomState.of(hub.control.state()))
        raw = await get("/operator/ledger", headers=operator_auth)
        same(
            LedgerStatusInfo,
            raw,
            await operator.ledger(),
            LedgerStatusInfo.of(await hub.decisions.status()),
        )
