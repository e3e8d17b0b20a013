"""Task round trips over the HTTP API and over MCP: each item reaches the right inbox once."""

from __future__ import annotations

import pytest
from mcp import Client

from caucus.errors import Conflict
from tests.conftest import ClientFactory
from tests.interaction.test_mcp_bridge import error, text


async def test_task_round_trips_over_http(connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    task = await alice.send_task("bob", "count the lines", subject="wc")
    got = (await bob.receive(timeout=5)).messages
    assert [(m.kind, m.content, (m.meta or {}).get("task_id")) for m in got] == [
        ("task", "count the lines", task.task_id)
    ]
    asked = await bob.request_input(task.task_id, "which file?")
    assert asked.state == "input_required"
    (question,) = (await alice.receive(timeout=5)).messages
    assert (question.kind, question.content) == ("input_request", "which file?")
    assert (await alice.reply_task(task.task_id, "main.py")).state == "pending"
    (again,) = (await bob.receive(timeout=5)).messages
    assert (again.meta or {})["answer"] == "main.py"
    done = await bob.reply_task(task.task_id, "412 lines")
    assert (done.state, done.a2a_state, done.result) == ("completed", "completed", "412 lines")
    (result,) = (await alice.receive(timeout=5)).messages
    assert (result.kind, result.sender, result.content) == ("result", "bob", "412 lines")
    with pytest.raises(Conflict):
        await bob.fail_task(task.task_id, "too late")
    status = await alice.task_status(task.task_id)
    assert [e["state"] for e in status.history] == [
        "pending",
        "in_progress",
        "input_required",
        "pending",
        "in_progress",
        "completed",
    ]
    assert [t.task_id for t in await alice.list_tasks("sent", "completed")] == [task.task_id]
    assert (await alice.receive(timeout=0.2)).messages == []  # nothing twice
    assert (await bob.receive(timeout=0.2)).messages == []


async def test_fail_and_cancel_over_http(connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    failing = await alice.send_task("bob", "impossible")
    canceled = await alice.send_task("bob", "never mind")
    await bob.receive(timeout=5)
    assert (await bob.fail_task(failing.task_id, "no such repo")).state == "failed"
    assert (await alice.cancel_task(canceled.task_id)).state == "canceled"
    kinds = [(m.kind, m.content) for m in (await alice.receive(timeout=5)).messages]
    assert kinds == [("failure", "no such repo")]
    told = [m.kind for m in (await bob.receive(timeout=5)).messages]
    assert told == ["task_canceled"]


async def test_task_round_trips_over_mcp(url: str) -> None:
    async with (
        Client(f"{url}/mcp", mode="legacy") as alice,
        Client(f"{url}/mcp", mode="legacy") as bob,
    ):
        await text(alice, "join", name="alice")
        await text(bob, "join", name="bob")
        sent = await text(alice, "send_task", to="bob", payload="lint the repo")
        task_id = sent.split()[1]
        assert "kind task" in await text(bob, "listen", timeout=5)
        assert "input_required" in await text(
            bob, "request_input", task_id=task_id, question="strict mode?"
        )
        assert "kind input_request" in await text(alice, "listen", timeout=5)
        assert ": pending" in await text(alice, "reply", task_id=task_id, result="yes")
        assert "kind task" in await text(bob, "listen", timeout=5)
        assert ": completed" in await text(bob, "reply", task_id=task_id, result="clean")
        assert "clean" in await text(alice, "listen", timeout=5)
        assert "[conflict]" in await error(alice, "cancel_task", task_id=task_id)
        status = await text(alice, "task_status", task_id=task_id)
        assert "history: pending by alice, in_progress by bob" in status
        assert task_id in await text(alice, "list_tasks", role="sent")
