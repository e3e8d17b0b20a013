"""Task dependencies and ready work over HTTP with `HubClient`, through the stdio bridge and at
`/mcp` (issue 34): a task that waits reaches its worker once what it waits on is done, ready
work comes most urgent first, a cycle is refused with its path, and bad terms with 422."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from mcp import Client

from caucus.client import HubClient
from caucus.errors import Conflict, InvalidRequest, NotFound
from caucus.operator_client import OperatorClient
from caucus.wire.work import TaskList
from tests.conftest import ClientFactory
from tests.interaction.test_mcp_bridge import bridge
from tests.mcptools import call, text_of


async def test_a_pipeline_of_tasks_runs_in_order_over_http(
    connect: ClientFactory, url: str
) -> None:
    lead, alice, bob = [await connect(n) for n in ("lead", "alice", "bob")]
    spec = await lead.send_task("alice", "write the spec", priority=1)
    build = await lead.send_task("bob", "build to the spec", blocked_by=[spec.task_id])
    ship = await lead.send_task(
        "bob", "ship it", blocked_by=[build.task_id], priority=0, on_failure="proceed"
    )
    assert (build.blocked, build.blocked_by, ship.on_failure) == (True, [spec.task_id], "proceed")
    assert await bob.ready_tasks() == []
    assert [t.task_id for t in await alice.ready_tasks()] == [spec.task_id]
    assert [m.kind for m in (await bob.receive(timeout=0)).messages] == []
    await alice.reply_task(spec.task_id, "spec.md")
    (ready,) = await bob.ready_tasks()
    assert (ready.task_id, ready.blocked) == (build.task_id, False)
    (item,) = (await bob.receive(timeout=0)).messages
    assert (item.meta or {})["task_id"] == build.task_id
    assert item.sender == "lead"  # the task's own sender, not the hub
    with pytest.raises(Conflict) as cycle:
        await lead.depend(ship.task_id, [ship.task_id])
    assert "cycle" in cycle.value.detail
    with pytest.raises(InvalidRequest):
        await lead.send_task("bob", "x", priority=7)
    async with httpx2.AsyncClient(base_url=url) as raw:
        headers = {"Authorization": f"Bearer {lead.token}"}
        refused = await raw.post(
            "/tasks", json={"to": "bob", "content": "x", "on_failure": "shrug"}, headers=headers
        )
        assert (refused.status_code, refused.json()["error"]) == (422, "invalid_request")


async def test_dependencies_through_the_bridge_and_at_mcp(url: str, tmp_path: Path) -> None:
    async with (
        bridge(url, tmp_path, "lead") as lead,
        Client(f"{url}/mcp", mode="legacy") as alice,
    ):
        await call(lead, "join")
        await call(alice, "join", name="alice")
        first = (await call(lead, "task", action="send", to="alice", content="first"))["tasks"][0]
        then = await call(
            lead,
            "task",
            action="send",
            to="alice",
            content="then",
            blocked_by=[first["task_id"]],
            priority=0,
        )
        later = then["tasks"][0]
        assert (later["blocked"], later["blocked_by"]) == (True, [first["task_id"]])
        text = await text_of(alice, "task", action="ready")
        assert text.startswith("1 task(s) you can start now, most urgent first.")
        assert first["task_id"] in text
        await call(alice, "task", action="reply", task_id=first["task_id"], result="done")
        ready = await call(alice, "task", action="ready")
        assert [t["task_id"] for t in ready["tasks"]] == [later["task_id"]]
        other = (await call(lead, "task", action="send", to="alice", content="x"))["tasks"][0]
        waiting = (
            await call(
                lead, "task", action="send", to="alice", content="y", blocked_by=[other["task_id"]]
            )
        )["tasks"][0]
        more = await call(
            lead, "task", action="depend", task_id=waiting["task_id"], blocked_by=[later["task_id"]]
        )
        posted = await call(
            lead, "offer", action="post", content="then polish", blocked_by=[other["task_id"]]
        )
        assert (posted["offers"][0]["blocked"], posted["offers"][0]["priority"]) == (True, 2)
        assert "once " in await text_of(alice, "offer", action="list")
        # What it waits on, oldest task first.
        assert more["tasks"][0]["blocked_by"] == [later["task_id"], other["task_id"]]


async def test_every_view_of_a_task_shows_the_same_task(
    connect: ClientFactory, url: str, operator: OperatorClient
) -> None:
    """`GET /tasks/{id}`, the sender's and the worker's lists, the ready queue and the
    operator's list show one task the same way: what it waited on and its history included."""
    lead, bob = await connect("lead"), await connect("bob")
    first = await lead.send_task("bob", "write the spec")
    second = await lead.send_task("bob", "build to the spec", blocked_by=[first.task_id])
    await bob.receive(timeout=0)
    await bob.reply_task(first.task_id, "spec.md")
    headers = {"Authorization": f"Bearer {bob.token}"}
    op = {"Authorization": f"Bearer {operator.token}"}
    async with httpx2.AsyncClient(base_url=url) as raw:
        alone = (await raw.get(f"/tasks/{second.task_id}", headers=headers)).json()
        views = {
            "ready": (await raw.get("/tasks/ready", headers=headers)).json()["tasks"],
            "received": (await raw.get("/tasks?role=received", headers=headers)).json()["tasks"],
            "sent": (
                await raw.get("/tasks?role=sent", headers={"Authorization": f"Bearer {lead.token}"})
            ).json()["tasks"],
            "operator": (await raw.get("/operator/tasks", headers=op)).json()["tasks"],
        }
    assert alone["blocked_by"] == [first.task_id]
    assert alone["history"]
    assert not alone["blocked"]
    for name, listed in views.items():
        (same,) = [t for t in listed if t["task_id"] == second.task_id]
        assert same == alone, name


async def test_a_task_shows_what_it_waits_on_that_its_reader_may_read(
    connect: ClientFactory,
) -> None:
    """`GET /tasks/{id}/blockers`, the verb added through the verb table alone (ADR 0039), so
    `HubClient` reaches it by name: each task the one asked about waits on, oldest first, with
    its state, for its parties; a dependency between two others is left out for the worker,
    and a stranger gets 404."""
    lead, alice, bob, eve = [await connect(n) for n in ("lead", "alice", "bob", "eve")]
    spec = await lead.send_task("alice", "write the spec")
    review = await lead.send_task("eve", "review the plan")
    build = await lead.send_task("bob", "build", blocked_by=[review.task_id, spec.task_id])
    await alice.reply_task(spec.task_id, "spec.md")

    async def blockers(who: HubClient, task_id: str) -> list[tuple[str, str]]:
        found = await who.call("blockers", task_id=task_id)
        assert isinstance(found, TaskList)
        return [(t.task_id, t.state) for t in found.tasks]

    assert await blockers(lead, build.task_id) == [
        (spec.task_id, "completed"),  # oldest first
        (review.task_id, "pending"),
    ]
    # bob works `build` but is no party to `review` or `spec`: he reads the ids, not the tasks.
    assert await blockers(bob, build.task_id) == []
    assert (await bob.task_status(build.task_id)).blocked_by == [spec.task_id, review.task_id]
    with pytest.raises(NotFound):
        await blockers(eve, build.task_id)
    assert await blockers(alice, spec.task_id) == []  # a task that waits on nothing
    with pytest.raises(TypeError, match="blockers takes no limit"):
        await lead.call("blockers", task_id=build.task_id, limit=3)
