"""Who may read a message (issue 47 item 1): an identity, never a name. A peer that renames
into a departed agent's name reads none of what that agent was sent, over HTTP on the
backend the suite runs on."""

from __future__ import annotations

import pytest

from caucus.errors import NotFound
from caucus.operator_client import OperatorClient
from tests.conftest import ClientFactory


async def test_a_rename_into_a_departed_name_reads_nothing_it_was_sent(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    dave = await connect("dave")
    alice = await connect("alice")
    bob = await connect("bob")
    sent = await alice.send("bob", "the staging password is hunter2")
    await operator.say("bob", "operator note: rotate hunter2 tonight")
    await alice.send_task("bob", "rotate hunter2 on staging", subject="hunter2")
    await bob.leave()
    await dave.register("bob")  # with its own token: a rename
    found = await dave.search("hunter2")
    assert found.hits == []
    assert "hunter2" not in await dave.export()  # what an agent may export: the same rule
    assert "hunter2" in await alice.export()
    assert (await alice.search("hunter2")).hits
    with pytest.raises(NotFound):
        await dave.thread_summary(sent.message_id)
