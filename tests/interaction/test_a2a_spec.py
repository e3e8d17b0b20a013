"""A2A 1.0's MUSTs where the door's scope touches them (issue 51, ADR 0038), over raw JSON-RPC
and the official a2a-sdk client, on a real hub: parse errors, required fields, enum filters,
unsupported operations, contextId mismatches, ListTasks' order and cursor, blocking sends
that wait, streams that report every state, notifications that do nothing, the room's card
usable by a standard client, and the card's shape by the version a client speaks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb

from caucus.client import HubClient
from caucus.config import Settings
from caucus.services.holds import HoldKind
from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from tests.interaction.test_a2a import ask, settled, work
from tests.waiting import eventually, within


class Room:
    """A hub with bob (a worker) and ext (the A2A caller), and ext's raw JSON-RPC."""

    def __init__(
        self, hub: Hub, url: str, http: httpx2.AsyncClient, bob: HubClient, ext: HubClient
    ):
        self.hub, self.url, self.http, self.bob, self.ext = hub, url, http, bob, ext
        self.token = ""
        self.calls = 0

    async def rpc(
        self, method: str, params: dict[str, Any], *, path: str = "/a2a/bob", **headers: str
    ) -> dict[str, Any]:
        self.calls += 1
        body = {"jsonrpc": "2.0", "id": self.calls, "method": method, "params": params}
        sent = {"Authorization": f"Bearer {self.token}", "A2A-Version": "1.0", **headers}
        answer = await self.http.post(path, json=body, headers=sent)
        assert answer.status_code == 200, answer.text
        found: dict[str, Any] = answer.json()
        return found

    async def send(self, text: str, **message: Any) -> dict[str, Any]:
        sent = {"messageId": f"m-{self.calls}", "role": "ROLE_USER", "parts": [{"text": text}]}
        config = {"returnImmediately": True}
        return await self.rpc(
            "SendMessage", {"message": {**sent, **message}, "configuration": config}
        )

    async def tasks(self) -> list[str]:
        return [t.id for t in await self.ext.list_tasks("sent")]


@asynccontextmanager
async def room(tmp_path: Path, **settings: Any) -> AsyncIterator[Room]:
    async with (
        make_hub(tmp_path / "hub", **settings) as hub,
        serve(hub) as url,
        HubClient(url) as bob,
        HubClient(url) as ext,
        httpx2.AsyncClient(base_url=url, timeout=30) as http,
    ):
        await bob.register("bob")
        made = Room(hub, url, http, bob, ext)
        made.token = (await ext.register("ext")).token
        yield made


def code(answer: dict[str, Any]) -> int:
    return int(answer["error"]["code"])


async def test_bad_requests_get_the_spec_s_codes_and_make_no_task(tmp_path: Path) -> None:
    async with room(tmp_path) as r:
        auth = {"Authorization": f"Bearer {r.token}", "Content-Type": "application/json"}
        garbled = await r.http.post(
            "/a2a/bob", content=b'{"jsonrpc": "2.0", "id": 1,', headers=auth
        )
        assert garbled.status_code == 200
        assert garbled.json() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": garbled.json()["error"]["message"]},
        }
        huge = await r.http.post("/a2a/bob", content=b"[" + b" " * 70_000 + b"]", headers=auth)
        assert huge.status_code == 413  # the hub's body limit holds on the door too

        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
        for missing in ("messageId", "role"):
            partial = {k: v for k, v in message.items() if k != missing}
            refused = await r.rpc("SendMessage", {"message": partial})
            assert code(refused) == -32602, refused
            assert missing in refused["error"]["message"]
        wrong_role = await r.rpc("SendMessage", {"message": {**message, "role": "ROLE_BOSS"}})
        assert code(wrong_role) == -32602
        bogus = await r.rpc("ListTasks", {"status": "TASK_STATE_BOGUS"})
        assert code(bogus) == -32602
        assert "TASK_STATE_WORKING" in bogus["error"]["message"]
        assert code(await r.rpc("GetTask", {"id": "t_x", "historyLength": -1})) == -32602
        assert code(await r.rpc("GetExtendedAgentCard", {})) == -32004
        legacy = await r.rpc("message/send", {"message": message})  # A2A-Version: 1.0
        assert code(legacy) == -32601

        # A notification (no id) is answered by nothing and does nothing.
        quiet = {"jsonrpc": "2.0", "method": "SendMessage", "params": {"message": message}}
        heard = await r.http.post("/a2a/bob", json=quiet, headers=auth)
        assert (heard.status_code, heard.content) == (204, b"")
        assert await r.tasks() == []


async def test_a_continuation_keeps_its_context_and_adds_to_the_task(tmp_path: Path) -> None:
    async with room(tmp_path) as r:
        task = (await r.send("count the files", contextId="audit"))["result"]["task"]
        mismatch = await r.send("and the folders", taskId=task["id"], contextId="other")
        assert code(mismatch) == -32602
        assert "audit" in mismatch["error"]["message"]
        more = await r.send("and the folders", taskId=task["id"], contextId="audit")
        assert more["result"]["task"]["id"] == task["id"]
        # The worker gets the task and the follow-up, on the task's thread.
        got = (await r.bob.receive(timeout=5)).messages
        assert [(m.kind, m.content, m.thread) for m in got] == [
            ("task", "count the files", "audit"),
            ("chat", "and the folders", "audit"),
        ]
        read = await r.rpc("GetTask", {"id": task["id"]})
        turns = [m["parts"][0]["text"] for m in read["result"]["history"]]
        assert turns == ["count the files", "and the folders"]
        assert (
            len(
                (await r.rpc("GetTask", {"id": task["id"], "historyLength": 1}))["result"][
                    "history"
                ]
            )
            == 1
        )


async def test_list_tasks_is_by_latest_status_change_with_an_opaque_cursor(
    tmp_path: Path,
) -> None:
    async with room(tmp_path) as r:
        ids = [(await r.send(f"job {n}"))["result"]["task"]["id"] for n in range(4)]
        await work(r.bob, answer="first done")  # job 0 changes last: it is listed first
        order = [ids[0], ids[3], ids[2], ids[1]]
        whole = (await r.rpc("ListTasks", {}))["result"]
        assert [t["id"] for t in whole["tasks"]] == order
        assert (whole["pageSize"], whole["totalSize"], whole["nextPageToken"]) == (4, 4, "")
        walked, token = [], ""
        while True:
            page = (await r.rpc("ListTasks", {"pageSize": 1, "pageToken": token}))["result"]
            walked += [t["id"] for t in page["tasks"]]
            token = page["nextPageToken"]
            if not token:
                break
            assert not token.lstrip("-").isdigit()  # a cursor, not an offset
        assert walked == order
        for forged in ("-5", "2", "not a token"):
            assert code(await r.rpc("ListTasks", {"pageToken": forged})) == -32602


async def test_a_blocking_send_waits_for_the_outcome_however_long_it_takes(
    tmp_path: Path,
) -> None:
    """No bound unless the operator sets one: the answer is the task done, never `working`."""
    assert Settings().a2a_wait_max is None  # 60 s at 7bd1b70: then the task as it was
    async with room(tmp_path) as r:
        message = {"messageId": "m-b", "role": "ROLE_USER", "parts": [{"text": "think hard"}]}
        blocking = asyncio.ensure_future(r.rpc("SendMessage", {"message": message}))
        taken = await within(r.bob.receive(timeout=10), 15, "the task to reach bob")
        [item] = taken.messages
        assert not blocking.done()
        task_id = str((item.meta or {})["task_id"])
        assert (await r.ext.task_status(task_id)).state == "in_progress"
        await r.bob.reply_task(task_id, "thought")
        answered = await within(blocking, 15, "the blocking send to answer")
        assert answered["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_caller_that_hangs_up_on_a_blocking_send_lets_go_of_what_it_held(
    tmp_path: Path,
) -> None:
    async with room(tmp_path) as r:
        caller = (await r.hub.registry.find("ext")).id
        blocking = asyncio.ensure_future(r.rpc("SendMessage", {"message": _message("wait")}))
        await eventually(
            lambda: r.hub.holds.count(caller, HoldKind.A2A) == 1, what="the send to wait"
        )
        blocking.cancel()  # the client hangs up
        await eventually(
            lambda: r.hub.holds.count(caller, HoldKind.A2A) == 0, what="its hold to go"
        )


async def test_a_stream_reports_working_between_submitted_and_the_outcome(
    tmp_path: Path,
) -> None:
    async with room(tmp_path) as r, _sdk_client(r.url, r.token, "bob", streaming=True) as client:
        worker = asyncio.create_task(work(r.bob, answer="done"))
        events = await settled(client, ask("do it"))
        await worker
        states = [
            e.task.status.state if e.HasField("task") else e.status_update.status.state
            for e in events
            if e.HasField("task") or e.HasField("status_update")
        ]
        assert states == [pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING, pb.TASK_STATE_COMPLETED]


async def test_a_standard_client_uses_the_room_s_well_known_card(tmp_path: Path) -> None:
    """No `metadata.to`: the room's endpoint hands the message to its front agent, the only
    agent here besides the caller (or the one the operator names)."""
    async with room(tmp_path) as r:
        for where in (r.url, f"{r.url}/a2a"):
            async with _sdk_client(where, r.token, None) as client:
                worker = asyncio.create_task(work(r.bob, answer="hello back"))
                [done] = await settled(client, ask("hello, room"))
                assert await worker == "hello, room"
                assert done.task.status.state == pb.TASK_STATE_COMPLETED
        async with HubClient(r.url) as cat:
            await cat.register("cat")  # now two could take it, and none is named the front
            unnamed = await r.rpc("SendMessage", {"message": _message("who?")}, path="/a2a")
            assert code(unnamed) == -32602
            assert "--a2a-front" in unnamed["error"]["message"]
            assert "bob" in unnamed["error"]["message"]
    async with room(tmp_path / "fronted", a2a_front="bob") as r, HubClient(r.url) as cat:
        await cat.register("cat")
        card = (await r.http.get("/.well-known/agent-card.json")).json()
        assert "a task to bob" in card["description"]
        now = {"message": _message("for the front"), "configuration": {"returnImmediately": True}}
        sent = await r.rpc("SendMessage", now, path="/a2a")
        assert sent["result"]["task"]["metadata"]["caucus"]["worker"] == "bob"


async def test_the_card_s_shape_follows_the_version_the_client_speaks(tmp_path: Path) -> None:
    async with room(tmp_path) as r:
        modern = (
            await r.http.get("/.well-known/agent-card.json", headers={"A2A-Version": "1.0"})
        ).json()
        [scheme] = modern["securitySchemes"].values()
        assert list(scheme) == ["httpAuthSecurityScheme"]
        assert "url" not in modern  # 0.3's field
        legacy = (await r.http.get("/.well-known/agent-card.json")).json()
        [both] = legacy["securitySchemes"].values()
        assert {"type", "scheme", "httpAuthSecurityScheme"} <= set(both)  # 0.3 clients read it
        assert legacy["url"] == f"{r.url}/a2a"
        # And a 1.0 method sent without the header is served as 1.0 (no name is in both).
        auth = {"Authorization": f"Bearer {r.token}"}
        body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
        listed = (await r.http.post("/a2a/bob", json=body, headers=auth)).json()
        assert listed["result"]["tasks"] == []


def _message(text: str) -> dict[str, Any]:
    return {"messageId": f"m-{text[:6]}", "role": "ROLE_USER", "parts": [{"text": text}]}


@asynccontextmanager
async def _sdk_client(
    base: str, token: str, agent: str | None, *, streaming: bool = False
) -> AsyncIterator[Any]:
    """The SDK's client from the card at `base` (or agent's), with `token` as its bearer."""
    where = f"{base}/a2a/{agent}" if agent else base
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        card = await A2ACardResolver(http, where).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(card)
        try:
            yield client
        finally:
            await client.close()
