"""What a model reads of a tool result (issue 30): the text is a rendering a model takes in at a
glance (join: who you are, who is here, what waits, how to wait, the protocol as Markdown
once; listen: a header line per message), and the structured content is the full typed object
under the tool's output schema, except for a host that hands its model only the structured
content (Claude Code), which gets the text alone and tools without output schemas."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp_types import Implementation

from tests.conftest import ClientFactory
from tests.injection import read_envelope


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


@pytest.mark.parametrize("host", ["gemini-cli-mcp-client", "claude-code"])
async def test_join_and_listen_read_at_a_glance_on_every_kind_of_host(
    url: str, connect: ClientFactory, host: str
) -> None:
    ann = await connect("ann")
    await ann.set_status("reviewing")
    who = Implementation(name=host, version="1")
    async with Client(f"{url}/mcp", client_info=who, mode="legacy") as client:
        tools = (await client.list_tools()).tools
        structured = host != "claude-code"
        assert {t.output_schema is not None for t in tools} == {structured}
        joined = await client.call_tool("join", {"name": "reader"})
        text = text_of(joined)
        lines = text.splitlines()
        assert lines[0] == "You are reader (new here)."
        assert lines[1] == "Here: ann (online)."
        assert lines[2] == "Nothing waits for you."
        assert lines[3].startswith("To wait for messages: ")
        assert "\n# Caucus operating protocol (v" in text  # Markdown, read once
        assert (joined.structured_content is not None) == structured
        if structured:
            assert joined.structured_content["protocol"].startswith("# Caucus operating protocol")
        again = text_of(await client.call_tool("join", {"name": "reader"}))
        assert again.startswith("You are reader (already joined).")
        assert "# Caucus operating protocol" not in again
        for n in range(5):
            await ann.send("reader", f"note {n}")
        heard = await client.call_tool("listen", {"timeout": 5})
        items = read_envelope(text_of(heard))
        assert [(i.sender, i.to, i.body) for i in items] == [
            ("ann", "you", f"note {n}") for n in range(5)
        ]
        assert "[#" in text_of(heard)
        assert "ann → you, just now]" in text_of(heard)
        if structured:
            assert [m["content"] for m in heard.structured_content["messages"]] == [
                f"note {n}" for n in range(5)
            ]
        else:
            assert heard.structured_content is None


async def test_an_error_reads_as_a_sentence_and_the_next_step_on_a_text_only_host(url: str) -> None:
    who = Implementation(name="claude-code", version="1")
    async with Client(f"{url}/mcp", client_info=who, mode="legacy") as client:
        failed = await client.call_tool("say", {"to": "bob", "content": "hi"})
    assert failed.is_error
    assert failed.structured_content is None
    assert text_of(failed).startswith("[not_joined] ")
    assert "Next: " in text_of(failed)
