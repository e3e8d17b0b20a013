"""Threads by the number a model reads (issue 50): over /mcp and the stdio bridge, a model
answers `#N` as its listen showed it, the answer reads "re #N from alice" to whoever gets it,
and a reference that does not resolve says which forms are taken."""

from __future__ import annotations

import re
from pathlib import Path

from mcp import Client

from tests.conftest import ClientFactory
from tests.interaction.test_mcp_bridge import bridge
from tests.mcptools import call, fail, text_of

HEADER = re.compile(r"\[#(\d+) from alice to you")


async def test_a_model_answers_the_number_it_read_and_the_reply_names_it(
    url: str, connect: ClientFactory, tmp_path: Path
) -> None:
    alice = await connect("alice")
    async with Client(f"{url}/mcp", mode="legacy") as on_mcp, bridge(url, tmp_path) as on_bridge:
        for name, client in (("bob", on_mcp), ("carol", on_bridge)):
            await call(client, "join", name=name)
            asked = await alice.send(name, "which branch?")
            read = await text_of(client, "listen", timeout=5)
            found = HEADER.search(read)
            assert found, read
            number = int(found.group(1))
            assert number == asked.seq
            for form in (f"#{number}", str(number)):
                await call(client, "say", to="alice", content="main", reply_to=form)
            (first, second) = (await alice.receive(timeout=5)).messages
            for answer in (first, second):
                assert (answer.reply_to, answer.reply_seq) == (asked.message_id, number)
                assert answer.reply_sender == "alice"
            await alice.send(name, "thanks", reply_to=f"#{second.seq}")
            heard = await text_of(client, "listen", timeout=5)
            assert f"re #{second.seq} from you" in heard, heard
            assert "thread" not in heard.split("]")[0]  # no thread id a model cannot use
            code, said = await fail(client, "say", to="alice", content="x", reply_to="#999999")
            assert code == "not_found"
            assert "#22 or 22" in said, said
            await call(client, "listen", timeout=0)  # acknowledge
