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


async def test_the_job_board_over_http(connect: ClientFactory) -> None:
    poster, ann, ben = await connect("poster"), await connect("ann"), await connect("ben")
    offer = await poster.post_offer(
        "translate the docs", subject="i18n", required_skills=["french"], ttl_seconds=600
    )
    assert offer.state == "open"
    await ann.claim_offer(offer.offer_id, "native speaker")
    await ben.claim_offer(offer.offer_id)
    with pytest.raises(Conflict):
        await ben.claim_offer(offer.offer_id)
    (listed,) = await ann.list_offers("open")
    assert [c["claimant"] for c in listed.claims] == ["ann", "ben"]
    assigned = await poster.resolve_offer(offer.offer_id, select="ann")
    assert (assigned.state, assigned.winner) == ("assigned", "ann")
    task = [m for m in (await ann.receive(timeout=5)).messages if m.kind == "task"]
    assert [m.thread for m in task] == [offer.offer_id]
    assert assigned.task_id is not None
    await ann.reply_task(assigned.task_id, "traduit")
    assert [o.offer_id for o in await poster.list_offers("completed")] == [offer.offer_id]


async def test_the_job_board_over_mcp(url: str) -> None:
    async with (
        Client(f"{url}/mcp", mode="legacy") as poster,
        Client(f"{url}/mcp", mode="legacy") as ann,
    ):
        await text(poster, "join", name="poster")
        await text(ann, "join", name="ann")
        posted = await text(poster, "post_offer", payload="review the RFC", subject="rfc")
        offer_id = posted.split()[1]
        assert offer_id in await text(ann, "list_offers")
        assert "claimed" in await text(ann, "claim_offer", offer_id=offer_id)
        assert "[forbidden]" in await error(poster, "claim_offer", offer_id=offer_id)
        assigned = await text(poster, "resolve_offer", offer_id=offer_id, select="ann")
        assert "assigned to ann as task t_" in assigned
        assert "kind task" in await text(ann, "listen", timeout=5)
