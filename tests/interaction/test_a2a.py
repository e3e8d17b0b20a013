"""The A2A door (issue 34) on a real hub over HTTP, driven by the official A2A Python SDK's own
client (`a2a-sdk`) as an agent of another framework would: it reads the cards, sends a message
that becomes a Caucus task to a room agent, and gets the result; streams a task through a
question and its answer; reads, lists and cancels. The door takes the room's bearer tokens and
no others, and refuses what it cannot take with A2A's own errors."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import (
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from caucus.client import HubClient
from caucus.testing import FakeClock, make_hub, serve

BOB_SKILLS: list[str | dict[str, Any]] = [
    {"id": "add", "name": "Adding", "description": "adds numbers", "tags": ["math"]}
]


def ask(text: str, **fields: Any) -> pb.SendMessageRequest:
    message = pb.Message(role=pb.ROLE_USER, message_id=f"m-{text[:8]}", parts=[pb.Part(text=text)])
    metadata = fields.pop("metadata", None)
    for key, value in fields.items():
        setattr(message, key, value)
    if metadata:
        message.metadata.update(metadata)
    return pb.SendMessageRequest(message=message)


@contextlib.asynccontextmanager
async def a2a_client(
    url: str, token: str, agent: str, *, streaming: bool = False
) -> AsyncIterator[tuple[Client, pb.AgentCard]]:
    """The SDK's client for one agent's card, sending `token` as its bearer."""
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        card = await A2ACardResolver(http, f"{url}/a2a/{agent}").get_agent_card()
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming))
        client = factory.create(card)
        try:
            yield client, card
        finally:
            await client.close()


async def work(agent: HubClient, answer: str | None = None, question: str | None = None) -> str:
    """Take the next task `agent` is handed; ask `question` about it, or reply `answer`."""
    while True:
        batch = await agent.receive(timeout=10)
        for item in batch.messages:
            if item.kind == "task":
                task_id = str((item.meta or {})["task_id"])
                if question is not None:
                    await agent.request_input(task_id, question)
                else:
                    await agent.reply_task(task_id, answer or f"done: {item.content}")
                return item.content


async def settled(client: Client, request: pb.SendMessageRequest) -> list[pb.StreamResponse]:
    return [event async for event in client.send_message(request)]


async def test_an_a2a_client_sends_a_caucus_agent_a_task_and_gets_the_result(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(tmp_path / "hub") as hub,
        serve(hub) as url,
        HubClient(url) as bob,
        HubClient(url) as ext,
    ):
        await bob.register("bob", skills=BOB_SKILLS, description="bob adds up")
        caller = await ext.register("ext")
        async with a2a_client(url, caller.token, "bob") as (client, card):
            assert card.name == "bob"
            assert card.description == "bob adds up"
            assert [(s.id, s.name, list(s.tags)) for s in card.skills] == [
                ("add", "Adding", ["math"])
            ]
            assert card.supported_interfaces[0].url == f"{url}/a2a/bob"
            assert card.capabilities.streaming
            assert list(card.security_requirements[0].schemes) == ["caucus-bearer"]

            worker = asyncio.create_task(work(bob, answer="5"))
            [response] = await settled(client, ask("what is 2 + 3?", context_id="sums"))
            assert await worker == "what is 2 + 3?"
            task = response.task
            assert task.status.state == pb.TASK_STATE_COMPLETED
            assert task.context_id == "sums"
            assert [p.text for p in task.artifacts[0].parts] == ["5"]
            assert [(m.role, m.parts[0].text) for m in task.history] == [
                (pb.ROLE_USER, "what is 2 + 3?"),
                (pb.ROLE_AGENT, "5"),
            ]

            # On the Caucus side it is an ordinary task from ext to bob, done.
            done = await ext.task_status(task.id)
            assert (done.sender, done.worker, done.state, done.result) == (
                "ext",
                "bob",
                "completed",
                "5",
            )
            again = await client.get_task(pb.GetTaskRequest(id=task.id, history_length=1))
            assert again.status.state == pb.TASK_STATE_COMPLETED
            assert [m.parts[0].text for m in again.history] == ["5"]
            listed = await client.list_tasks(pb.ListTasksRequest(include_artifacts=True))
            assert [t.id for t in listed.tasks] == [task.id]
            assert listed.tasks[0].artifacts[0].parts[0].text == "5"


async def test_a_streamed_task_reports_its_question_and_its_result_after_the_answer(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(tmp_path / "hub") as hub,
        serve(hub) as url,
        HubClient(url) as bob,
        HubClient(url) as ext,
    ):
        await bob.register("bob")
        caller = await ext.register("ext")
        async with a2a_client(url, caller.token, "bob", streaming=True) as (client, card):
            assert card.skills[0].id == "task"  # bob declared none: the one thing it does
            worker = asyncio.create_task(work(bob, question="in which base?"))
            events = await settled(client, ask("add 2 and 3"))
            await worker
            assert events[0].task.status.state == pb.TASK_STATE_SUBMITTED
            task_id = events[0].task.id
            last = events[-1].status_update
            assert last.task_id == task_id
            assert last.status.state == pb.TASK_STATE_INPUT_REQUIRED
            assert last.status.message.parts[0].text == "in which base?"

            # The answer is a message on the same task; bob gets the task back with it.
            worker = asyncio.create_task(work(bob, answer="5 (base ten)"))
            events = await settled(client, ask("base ten", task_id=task_id))
            await worker
            kinds = [e.WhichOneof("payload") for e in events]
            assert kinds[0] == "task"
            assert kinds[-2:] == ["artifact_update", "status_update"]
            assert events[-2].artifact_update.artifact.parts[0].text == "5 (base ten)"
            assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
            done = await ext.task_status(task_id)
            assert (done.question, done.answer, done.result) == (
                "in which base?",
                "base ten",
                "5 (base ten)",
            )

            # A settled task takes no more messages, and has no stream to join.
            with pytest.raises(UnsupportedOperationError, match="completed"):
                await settled(client, ask("more?", task_id=task_id))
            with pytest.raises(UnsupportedOperationError, match="completed"):
                [e async for e in client.subscribe(pb.SubscribeToTaskRequest(id=task_id))]


async def test_a_task_sent_without_waiting_is_read_and_canceled_by_its_caller_alone(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(tmp_path / "hub") as hub,
        serve(hub) as url,
        HubClient(url) as bob,
        HubClient(url) as ext,
        HubClient(url) as eve,
    ):
        await bob.register("bob")
        caller = await ext.register("ext")
        other = await eve.register("eve")
        async with a2a_client(url, caller.token, "bob") as (client, _):
            request = ask("take your time")
            request.configuration.return_immediately = True
            [response] = await settled(client, request)
            task_id = response.task.id
            assert response.task.status.state == pb.TASK_STATE_SUBMITTED

            async with a2a_client(url, other.token, "bob") as (stranger, _):
                with pytest.raises(TaskNotFoundError):
                    await stranger.get_task(pb.GetTaskRequest(id=task_id))
                with pytest.raises(TaskNotFoundError):
                    await stranger.cancel_task(pb.CancelTaskRequest(id=task_id))

            canceled = await client.cancel_task(pb.CancelTaskRequest(id=task_id))
            assert canceled.status.state == pb.TASK_STATE_CANCELED
            assert (await ext.task_status(task_id)).state == "canceled"
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(pb.CancelTaskRequest(id=task_id))
            with pytest.raises(TaskNotFoundError):
                await client.get_task(pb.GetTaskRequest(id="t_nothing"))
            with pytest.raises(PushNotificationNotSupportedError):
                await client.get_task_push_notification_config(
                    pb.GetTaskPushNotificationConfigRequest(task_id=task_id, id="x")
                )
            canceled_only = await client.list_tasks(
                pb.ListTasksRequest(status=pb.TASK_STATE_CANCELED)
            )
            assert [t.id for t in canceled_only.tasks] == [task_id]
            working = await client.list_tasks(pb.ListTasksRequest(status=pb.TASK_STATE_WORKING))
            assert list(working.tasks) == []


async def test_a_blocking_send_answers_with_the_task_as_it_is_when_the_agent_takes_longer(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(tmp_path / "hub", a2a_wait_max=0.2) as hub,
        serve(hub) as url,
        HubClient(url) as bob,
        HubClient(url) as ext,
    ):
        await bob.register("bob")
        caller = await ext.register("ext")
        async with a2a_client(url, caller.token, "bob") as (client, _):
            [response] = await settled(client, ask("a long job"))
            assert response.task.status.state == pb.TASK_STATE_SUBMITTED
            await work(bob, answer="finished")
            found = await client.get_task(pb.GetTaskRequest(id=response.task.id))
            assert found.status.state == pb.TASK_STATE_COMPLETED


async def test_the_door_takes_room_tokens_only_and_names_what_it_cannot_take(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(tmp_path / "hub") as hub,
        serve(hub) as url,
        HubClient(url) as bob,
        HubClient(url) as ext,
        HubClient(url) as cat,
        httpx2.AsyncClient(base_url=url) as http,
    ):
        await bob.register("bob", skills=BOB_SKILLS)
        caller = await ext.register("ext")
        rpc = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "GetTask",
            "params": {"id": "t_x"},
        }
        # No token, an unknown one, the operator's: refused before anything is dispatched.
        assert (await http.post("/a2a/bob", json=rpc)).status_code == 401
        wrong = {"Authorization": "Bearer caucus_nobody"}
        assert (await http.post("/a2a/bob", json=rpc, headers=wrong)).status_code == 401
        boss = {"Authorization": f"Bearer {hub.operator.token}"}
        assert (await http.post("/a2a/bob", json=rpc, headers=boss)).status_code == 403
        mine = {"Authorization": f"Bearer {caller.token}", "A2A-Version": "1.0"}
        missing = await http.post("/a2a/nobody", json=rpc, headers=mine)
        assert (missing.status_code, missing.json()["error"]) == (404, "not_found")
        assert (await http.get("/a2a/nobody/.well-known/agent-card.json")).status_code == 404

        # The room's card: each agent is a skill, with its own card's address.
        room = (await http.get("/.well-known/agent-card.json")).json()
        assert room["name"] == "Caucus room"
        assert {s["id"] for s in room["skills"]} == {"bob", "ext"}
        bob_skill = next(s for s in room["skills"] if s["id"] == "bob")
        assert f"{url}/a2a/bob/.well-known/agent-card.json" in bob_skill["description"]
        assert "math" in bob_skill["tags"]
        assert room["supportedInterfaces"][0]["url"] == f"{url}/a2a"

        # The room's endpoint takes the agent from metadata.to, and says so when it is missing
        # and no front agent takes it (two agents besides the caller, none named the front).
        await cat.register("cat")
        send = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": "m1",
                    "role": "ROLE_USER",
                    "parts": [{"text": "hello"}],
                },
                "configuration": {"returnImmediately": True},
            },
        }
        unnamed = (await http.post("/a2a", json=send, headers=mine)).json()
        assert unnamed["error"]["code"] == -32602, unnamed
        await cat.leave()
        assert "metadata.to" in unnamed["error"]["message"]
        assert "bob" in unnamed["error"]["message"]
        send["params"]["message"]["metadata"] = {"to": "bob", "subject": "greeting"}  # type: ignore[index]
        named = (await http.post("/a2a", json=send, headers=mine)).json()
        task = named["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
        assert task["metadata"]["caucus"] == {
            "sender": "ext",
            "worker": "bob",
            "state": "pending",
            "subject": "greeting",
        }

        # Bytes are refused with A2A's content-type error; an empty message as bad params.
        send["params"]["message"]["parts"] = [{"raw": "aGk=", "mediaType": "image/png"}]  # type: ignore[index]
        refused = (await http.post("/a2a/bob", json=send, headers=mine)).json()
        assert refused["error"]["code"] == -32005, refused
        send["params"]["message"]["parts"] = [{"text": "  "}]  # type: ignore[index]
        empty = (await http.post("/a2a/bob", json=send, headers=mine)).json()
        assert empty["error"]["code"] == -32602, empty

        # A2A 0.3's method names on the same endpoint (no A2A-Version header).
        legacy = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "message/send",
            "params": {
                "message": {
                    "kind": "message",
                    "messageId": "m2",
                    "role": "user",
                    "parts": [{"kind": "text", "text": "hi from 0.3"}],
                },
                "configuration": {"blocking": False},
            },
        }
        old = {"Authorization": f"Bearer {caller.token}"}
        answered = (await http.post("/a2a/bob", json=legacy, headers=old)).json()
        assert answered["result"]["kind"] == "task", answered
        assert answered["result"]["status"]["state"] == "submitted"
        legacy_id = answered["result"]["id"]
        got = await http.post(
            "/a2a/bob",
            json={"jsonrpc": "2.0", "id": 4, "method": "tasks/get", "params": {"id": legacy_id}},
            headers=old,
        )
        assert got.json()["result"]["id"] == legacy_id
        items = (await bob.receive(timeout=5)).messages
        assert [i.content for i in items if i.kind == "task"] == ["hello", "hi from 0.3"]
        assert json.loads(json.dumps(items[0].meta))["subject"] == "greeting"


async def test_malformed_bodies_log_one_line_a_minute_per_agent_and_no_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    async with (
        make_hub(tmp_path / "hub", clock=clock) as hub,
        serve(hub) as url,
        HubClient(url) as bob,
        HubClient(url) as ext,
        httpx2.AsyncClient(base_url=url) as http,
    ):
        await bob.register("bob")
        caller = await ext.register("ext")
        mine = {"Authorization": f"Bearer {caller.token}", "A2A-Version": "1.0"}
        # Past the door's own screen (`a2a/screen.py`): the SDK's parser refuses it, and logs.
        message = {"messageId": "m", "role": "ROLE_USER", "parts": 5}
        bad = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        caplog.clear()
        for _ in range(200):
            answered = await http.post("/a2a/bob", json=bad, headers=mine)
            assert answered.json()["error"]["code"] == -32602
        lines = [r for r in caplog.records if r.name.startswith("a2a") and r.levelno >= 30]
        assert len(lines) == 1, [r.getMessage() for r in lines]
        (line,) = lines
        assert line.levelname == "WARNING"
        assert line.exc_info is None
        assert "A2A request from ext refused" in line.getMessage()
        clock.advance(61)  # a minute later, one more line
        await http.post("/a2a/bob", json=bad, headers=mine)
        warned = [r for r in caplog.records if r.name.startswith("a2a") and r.levelno >= 30]
        assert len(warned) == 2


async def test_cards_name_the_configured_url_and_a_second_host_header_is_refused(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(tmp_path / "hub", public_url="https://hub.example.test/room") as hub,
        serve(hub) as url,
        HubClient(url) as bob,
        httpx2.AsyncClient(base_url=url) as http,
    ):
        await bob.register("bob")
        card = (await http.get("/a2a/bob/.well-known/agent-card.json")).json()
        assert card["supportedInterfaces"][0]["url"] == "https://hub.example.test/room/a2a/bob"
        host = url.removeprefix("http://").encode()
        twice = [(b"host", b"evil.example"), (b"host", host)]
        raw = await _raw_get(url, "/.well-known/agent-card.json", twice)
        assert raw.startswith(b"HTTP/1.1 400"), raw[:200]
        assert b"malformed_request" in raw
        assert b"evil.example" not in raw


async def _raw_get(url: str, path: str, headers: list[tuple[bytes, bytes]]) -> bytes:
    """A request exactly as written (an HTTP client merges or refuses repeated headers)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = b"GET " + path.encode() + b" HTTP/1.1\r\n"
    head += b"".join(k + b": " + v + b"\r\n" for k, v in headers)
    writer.write(head + b"connection: close\r\n\r\n")
    answer = await reader.read()
    writer.close()
    return answer
