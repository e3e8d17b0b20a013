"""Task round trips over the HTTP API and over MCP: each item reaches the right inbox once."""

from __future__ import annotations

import pytest
from mcp import Client

from caucus.errors import Conflict
from tests.conftest import ClientFactory
from tests.mcptools import call, fail


async def test_task_round_trips_over_http(connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    task = await alice.send_task("bob", "count the lines", subject="wc")
    assert await alice.task_status(task.task_id) == task
    got = (await bob.receive(timeout=5)).messages
    assert [(m.kind, m.content, (m.meta or {}).get("task_id")) for m in got] == [
        ("task", "count the lines", task.task_id)
    ]
    asked = await bob.request_input(task.task_id, "which file?")
    assert asked.state == "input_required"
    assert await alice.task_status(task.task_id) == asked  # each answer is what was stored
    (question,) = (await alice.receive(timeout=5)).messages
    assert (question.kind, question.content) == ("input_request", "which file?")
    assert (await alice.reply_task(task.task_id, "main.py")).state == "pending"
    (again,) = (await bob.receive(timeout=5)).messages
    assert (again.meta or {})["answer"] == "main.py"
    done = await bob.reply_task(task.task_id, "412 lines")
    assert (done.state, done.a2a_state, done.result) == ("completed", "completed", "412 lines")
    assert await bob.task_status(task.task_id) == done
    (result,) = (await alice.receive(timeout=5)).messages
    assert (result.kind, result.sender, result.content) == ("result", "bob", "412 lines")
    with pytest.raises(Conflict):
        await bob.fail_task(task.task_id, "too late")
    status = await alice.task_status(task.task_id)
    assert [e.state for e in status.history] == [
        "pending",
        "in_progress",
        "input_required",
        "pending",
        "in_progress",
        "completed",
    ]
    assert [t.task_id for t in await alice.list_tasks("sent", "completed")] == [task.task_id]
    assert (await alice.receive(timeout=0)).messages == []  # nothing twice
    assert (await bob.receive(timeout=0)).messages == []


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
        await call(alice, "join", name="alice")
        await call(bob, "join", name="bob")
        (sent,) = (await call(alice, "task", action="send", to="bob", content="lint the repo"))[
            "tasks"
        ]
        task_id = sent["task_id"]
        assert sent["state"] == "pending"
        assert await kinds(bob) == ["task"]
        asked = await call(bob, "task", action="ask", task_id=task_id, question="strict mode?")
        assert asked["tasks"][0]["state"] == "input_required"
        assert await kinds(alice) == ["input_request"]
        answered = await call(alice, "task", action="reply", task_id=task_id, result="yes")
        assert answered["tasks"][0]["state"] == "pending"
        assert await kinds(bob) == ["task"]
        done = await call(bob, "task", action="reply", task_id=task_id, result="clean")
        assert (done["tasks"][0]["state"], done["tasks"][0]["result"]) == ("completed", "clean")
        assert await kinds(alice) == ["result"]
        assert (await fail(alice, "task", action="cancel", task_id=task_id))[0] == "conflict"
        (status,) = (await call(alice, "task", action="status", task_id=task_id))["tasks"]
        assert (status["state"], status["worker"], status["answer"]) == ("completed", "bob", "yes")
        listed = await call(alice, "task", action="list", role="sent")
        assert [t["task_id"] for t in listed["tasks"]] == [task_id]
        code, text = await fail(alice, "task", action="reply")
        assert (code, text) == (
            "invalid_request",
            "[invalid_request] task_id is required for reply.",
        )


async def kinds(client: Client) -> list[str]:
    return [m["kind"] for m in (await call(client, "listen", timeout=5))["messages"]]


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
    assert [c.claimant for c in listed.claims] == ["ann", "ben"]
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
        await call(poster, "join", name="poster")
        await call(ann, "join", name="ann")
        posted = await call(poster, "offer", action="post", content="review the RFC", subject="rfc")
        offer_id = posted["offers"][0]["offer_id"]
        listed = await call(ann, "offer", action="list")
        assert [o["offer_id"] for o in listed["offers"]] == [offer_id]
        claimed = await call(ann, "offer", action="claim", offer_id=offer_id, note="I know it")
        assert [(c["claimant"], c["note"]) for c in claimed["offers"][0]["claims"]] == [
            ("ann", "I know it")
        ]
        assert (await fail(poster, "offer", action="claim", offer_id=offer_id))[0] == "forbidden"
        chosen = await call(poster, "offer", action="select", offer_id=offer_id, claimant="ann")
        (assigned,) = chosen["offers"]
        assert (assigned["state"], assigned["winner"]) == ("assigned", "ann")
        assert assigned["task_id"].startswith("t_")
        assert "task" in await kinds(ann)
