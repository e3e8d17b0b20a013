"""The tool catalog as a model reads it: real output schemas, every argument described, closed
sets as enums, annotations, no `$ref`, and a guarded token cost. Any regression fails here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client

from caucus.config import Settings
from caucus.domain.messages import SystemSender
from caucus.domain.names import RESERVED_NAMES
from caucus.errors import Hint
from caucus.mcp.hints import TOOL_HINTS
from caucus.mcp.results import WatchCommand
from caucus.mcp.server import ToolServer
from caucus.mcp.tools import Call, Catalog
from caucus.protocol import CORE_LIMIT, core_text
from caucus.testing import make_hub, serve
from caucus.web.errors import HTTP_HINTS
from caucus.wire.room import Limits
from tests.mcptools import call, fail

# What a session's `tools/list` may cost (issue 50): the whole catalog, every noun and output
# schema included, in compact JSON as the wire carries it. benchmarks/catalog.py prints it per
# tool, with tokens, beside what it was (28,534 characters at 7bd1b70). A new tool pays its way
# by trimming, or moves this line with an ADR saying why.
CATALOG_CEILING = 12_000
DESCRIPTION_CEILING = 160  # characters per tool description
ARGUMENT_DESCRIPTION_CEILING = 60

# Arguments whose values form a closed set a model picks from: each must be an enum. (A list's
# filter by state is checked when used, and its refusal names the states: ADR 0035.)
CLOSED_ARGUMENTS = {
    ("channel", "action"),
    ("floor", "action"),
    ("task", "action"),
    ("task", "role"),
    ("task", "on_failure"),
    ("offer", "action"),
    ("reservation", "action"),
    ("search", "action"),
    ("search", "kind"),
    ("teammate", "action"),
    ("protocol", "section"),
    ("ask_operator", "fields.type"),
    ("submit_position", "stance"),
}
# What MCP assumes of a tool whose annotations leave a hint out.
HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}


async def _no_watch(*_: object) -> WatchCommand:
    raise AssertionError("not called")


def listings() -> dict[str, list[dict[str, Any]]]:
    """The catalog as each transport lists it: the bridge (with its watcher), /mcp in a
    session, and /mcp for a 2026-07-28 client (every tool takes a handle)."""
    limits = Limits.of(Settings())

    def listed(catalog: Catalog, with_handle: bool) -> list[dict[str, Any]]:
        async def no_call(*_: object) -> Call:
            raise AssertionError("not called")

        async def no_limits(*_: object) -> Limits:
            return limits

        server = ToolServer(
            catalog, call_for=no_call, limits_for=no_limits, default_name=lambda _: None
        )
        tools = server.listing(limits, with_handle, "agent")
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]

    # Both transports name a watcher now: the bridge and /mcp list the same tools.
    return {
        "bridge": listed(Catalog(watch_for=_no_watch), False),
        "mcp": listed(Catalog(watch_for=_no_watch), False),
        "mcp-2026": listed(Catalog(watch_for=_no_watch), True),
    }


def walk(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """(dotted path, schema) of every property, through objects and arrays."""
    if not isinstance(schema, dict):
        return
    for name, prop in schema.get("properties", {}).items():
        here = f"{path}.{name}" if path else name
        yield here, prop
        yield from walk(prop, here)
        if isinstance(prop.get("items"), dict):
            yield from walk(prop["items"], here)


@pytest.mark.parametrize("transport", ["bridge", "mcp", "mcp-2026"])
def test_every_tool_has_a_real_output_schema_annotations_and_no_refs(transport: str) -> None:
    tools = Catalog(watch_for=_no_watch).tools
    for tool in listings()[transport]:
        name = tool["name"]
        out = tool["outputSchema"]
        assert out == tools[name].view.schema(), name
        assert out["properties"], name
        for schema in (tool["inputSchema"], out):
            text = json.dumps(schema)
            assert "$ref" not in text, name
            assert "$defs" not in text, name
            jsonschema.Draft202012Validator.check_schema(schema)
        # Only the hints that differ from MCP's defaults are listed; read with the defaults,
        # they say what the tool is.
        hints = HINT_DEFAULTS | tool.get("annotations", {})
        declared = tools[name]
        assert hints["readOnlyHint"] is declared.read_only, name
        if not declared.read_only:
            assert hints["destructiveHint"] is declared.destructive, name
            assert hints["idempotentHint"] is declared.idempotent, name
        assert len(tool["description"]) <= DESCRIPTION_CEILING, name
        assert "{" not in tool["description"], f"{name}: an unfilled placeholder"


@pytest.mark.parametrize("transport", ["bridge", "mcp", "mcp-2026"])
def test_descriptions_are_short_and_closed_sets_are_enums(transport: str) -> None:
    found: set[tuple[str, str]] = set()
    for tool in listings()[transport]:
        for where, prop in walk(tool["inputSchema"]):
            description = prop.get("description", "")
            assert len(description) <= ARGUMENT_DESCRIPTION_CEILING, (tool["name"], where)
            assert "{" not in description, (tool["name"], where)
            assert "type" in prop, (tool["name"], where)
            if "enum" in prop:
                found.add((tool["name"], where))
    assert found >= CLOSED_ARGUMENTS, CLOSED_ARGUMENTS - found


def test_a_session_s_whole_catalog_fits_its_ceiling() -> None:
    for transport in ("bridge", "mcp"):
        size = len(json.dumps(listings()[transport], separators=(",", ":")))
        assert size <= CATALOG_CEILING, f"{transport}: tools/list is {size} characters"


def test_the_protocol_core_stays_short() -> None:
    assert len(core_text()) < CORE_LIMIT


def test_every_next_step_is_said_by_both_transports() -> None:
    assert set(TOOL_HINTS) == set(Hint) == set(HTTP_HINTS)
    for hint in Hint:
        assert "/" not in TOOL_HINTS[hint], f"{hint}: a route in a tool hint"


async def test_every_tool_answers_structured_content_that_fits_its_schema(url: str) -> None:
    async with (
        Client(f"{url}/mcp", mode="legacy") as alice,
        Client(f"{url}/mcp", mode="legacy") as bob,
    ):
        schemas = {t.name: t.output_schema for t in (await alice.list_tools()).tools}
        results: dict[str, dict[str, Any]] = {}

        async def run(client: Client, tool: str, **args: object) -> dict[str, Any]:
            result = await client.call_tool(tool, dict(args))
            assert not result.is_error, result.content
            data = result.structured_content
            assert isinstance(data, dict)
            jsonschema.validate(data, schemas[tool])  # checked here, not only by the SDK
            text = result.content[0].text  # type: ignore[union-attr]
            assert text
            assert json.dumps(data) not in text  # one line, not the data again
            results[tool] = data
            return data

        await run(alice, "whoami")
        await run(alice, "protocol", section="delivery")
        await run(alice, "join", name="alice", skills=["sql"], description="db person")
        await run(bob, "join", name="bob")
        await run(alice, "set_status", status="reviewing")
        await run(alice, "peers")
        await run(alice, "channel", action="join", channel="#ops")
        await run(alice, "channel", action="topic", channel="#ops", topic="deploys")
        await run(bob, "channel", action="list")
        await run(alice, "say", to="bob", content="hello", thread="t1")
        await run(bob, "listen", timeout=5)
        await run(bob, "watch_command")
        found = await run(bob, "search", q="hello")
        assert found["hits"][0]["snippet"] == "**hello**"
        summary = await run(bob, "search", action="summarize", thread="t1")
        assert summary["summary"]["participants"] == ["alice"]
        await run(alice, "announce", content="release at noon", subject="release")
        await run(alice, "floor", action="take", scope="#ops", reason="deploying")
        task = await run(alice, "task", action="send", to="bob", content="check the logs")
        await run(bob, "task", action="list")
        await run(bob, "task", action="reply", task_id=task["tasks"][0]["task_id"], result="ok")
        offer = await run(bob, "offer", action="post", content="review", skills=["sql"])
        await run(alice, "offer", action="claim", offer_id=offer["offers"][0]["offer_id"])
        await run(alice, "offer", action="list", matching=True)
        held = await run(alice, "reservation", action="reserve", paths=["src/"], reason="moving")
        granted = await run(bob, "reservation", action="reserve", paths=["src/app.py"])
        assert granted["conflicts"][0]["holder"] == "alice"  # advisory: granted all the same
        await run(bob, "reservation", action="list")
        await run(alice, "reservation", action="renew", ttl=600)
        mine = held["reservations"][0]["reservation_id"]
        await run(alice, "reservation", action="release", ids=[mine])
        standing = await run(bob, "teammate")  # no grant: what it may not do, and why
        assert not standing["granted"]
        await run(alice, "ask_operator", title="Ship?", fields=[{"key": "go", "type": "text"}])
        await run(bob, "ask_operator")
        await run(bob, "decisions", limit=5)
        convened = await run(alice, "convene", subject="Ship?", panel=["bob"], deadline=60)
        deliberation = convened["deliberation_id"]
        for _ in range(10):  # until the position request reaches bob
            heard = await run(bob, "listen", timeout=5)
            if any(m.get("thread") == deliberation for m in heard["messages"]):
                break
        await run(
            bob,
            "submit_position",
            deliberation=deliberation,
            stance="approve",
            summary="ready",
            confidence=0.8,
        )
        await run(bob, "leave")
        listed = {t.name for t in (await alice.list_tools()).tools}
        assert set(results) == listed, listed - set(results)


async def test_errors_name_the_code_and_the_tool_to_call_next_in_one_plain_sentence(
    url: str,
) -> None:
    async with Client(f"{url}/mcp", mode="legacy") as alice:
        await call(alice, "join", name="alice")
        for tool, args in (
            ("say", {"to": "bob"}),  # content missing
            ("say", {"to": "bob", "content": 5}),
            ("listen", {"timeout": "soon"}),
            ("channel", {"action": "dance"}),
            ("say", {"to": "bob", "content": "x", "colour": "red"}),
        ):
            code, text = await fail(alice, tool, **args)
            assert code == "invalid_request"
            assert text.startswith(f"[invalid_request] {tool}: ")
            assert "http" not in text.lower(), text
            assert "pydantic" not in text.lower(), text
            assert "\n" not in text
        code, text = await fail(alice, "say", to="ghost", content="anyone?")
        assert (code, text) == (
            "not_found",
            "[not_found] no peer named 'ghost' is here. Next: call peers to see who is here.",
        )


async def test_a_send_that_reached_nobody_says_so(url: str) -> None:
    async with Client(f"{url}/mcp", mode="legacy") as alice:
        await call(alice, "join", name="alice")
        sent = await call(alice, "say", to="all", content="anyone?")
        assert (sent["delivered_to"], sent["notice"]) == ([], "no_recipients")


async def test_the_limits_a_model_reads_are_the_ones_this_hub_enforces(tmp_path: Path) -> None:
    async with (
        make_hub(tmp_path, max_content_chars=500, announce_hourly=3, open_offers_max=2) as hub,
        serve(hub) as url,
        Client(f"{url}/mcp", mode="legacy") as client,
    ):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "3 an hour" in (tools["announce"].description or "")
        assert "2 open at most" in (tools["offer"].description or "")
        await call(client, "join", name="alice")
        # A bound the catalog leaves out is named in the refusal.
        code, text = await fail(client, "say", to="all", content="x" * 501)
        assert code == "payload_too_large"
        assert "500" in text


def test_the_system_senders_are_reserved_names() -> None:
    assert {s.value for s in SystemSender} <= RESERVED_NAMES
