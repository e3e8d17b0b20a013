"""The A2A door across hub processes (issue 34): an A2A client at one `caucus hub` process
hands a task to an agent connected to another process on the same PostgreSQL database, and the
blocking send answers with the result: the outcome reaches the waiting door by the database's
wake-up, not by a poll."""

from __future__ import annotations

import asyncio

from a2a.types import a2a_pb2 as pb

from caucus.client import HubClient
from tests.interaction.test_a2a import a2a_client, ask, settled, work
from tests.scaleout.conftest import Room


async def test_an_a2a_task_through_one_process_is_answered_by_an_agent_on_another(
    room: Room,
) -> None:
    first, second = room(2)
    async with HubClient(first.url) as ext, HubClient(second.url) as bob:
        await bob.register("bob")
        caller = await ext.register("ext")
        async with a2a_client(first.url, caller.token, "bob") as (client, card):
            assert card.supported_interfaces[0].url == f"{first.url}/a2a/bob"
            worker = asyncio.create_task(work(bob, answer="from the other process"))
            [response] = await settled(client, ask("who answers?"))
            await worker
            assert response.task.status.state == pb.TASK_STATE_COMPLETED
            assert response.task.artifacts[0].parts[0].text == "from the other process"
