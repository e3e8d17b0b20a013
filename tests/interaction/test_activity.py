"""The activity view: every MCP tool call, on the hub's /mcp (the official SDK client) and
through a stdio bridge (which reports its calls), with its caller, outcome, error code and
duration; the operator reads it, filtered, and the live feed carries each call; an agent can
only report calls under its own name, and an observer reads but cannot report."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from caucus.client import HubClient
from caucus.errors import Forbidden, InvalidRequest
from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from caucus.wire.activity import ToolCallInfo
from tests.conftest import ClientFactory, eventually
from tests.interaction.test_mcp_bridge import bridge
from tests.mcptools import call, fail


async def calls_of(operator: OperatorClient, caller: str, count: int) -> list[ToolCallInfo]:
    found: list[ToolCallInfo] = []

    async def enough() -> bool:
        found[:] = await operator.activity(caller=caller)
        return len(found) >= count

    await eventually(enough, within=20, what=f"{count} calls by {caller}")
    return found


async def test_tool_calls_on_mcp_and_through_a_bridge_reach_the_activity_view(
    url: str, live_hub: Hub, operator: OperatorClient, connect: ClientFactory, tmp_path: Path
) -> None:
    await connect("carol")
    async with Client(f"{url}/mcp", mode="legacy") as alice:
        await call(alice, "join", name="alice")
        await call(alice, "say", to="carol", content="hello")
        code, _ = await fail(alice, "say", to="nobody-here", content="hello?")
        assert code == "not_found"
    calls = await calls_of(operator, "alice", 3)
    assert [(c.tool, c.ok, c.error, c.via, c.witness) for c in calls] == [
        ("say", False, "not_found", "mcp", "observed"),
        ("say", True, None, "mcp", "observed"),
        ("join", True, None, "mcp", "observed"),
    ]
    assert calls[0].detail is not None
    assert "nobody-here" in calls[0].detail
    assert all(c.ms >= 0 for c in calls)
    # What each was called with, as the operator reads it.
    assert calls[1].arguments == '{"to": "carol", "content": "hello"}'
    assert calls[0].arguments == '{"to": "nobody-here", "content": "hello?"}'

    async with bridge(url, tmp_path, name="bea") as bea:
        await call(bea, "join", name="bea")
        await call(bea, "say", to="carol", content="from the bridge")
        code, _ = await fail(bea, "offer", action="claim", offer_id="o_missing")
    calls = await calls_of(operator, "bea", 3)
    assert {(c.via, c.witness) for c in calls} == {("bridge", "self-reported")}
    assert [c.tool for c in calls] == ["offer", "say", "join"]
    assert calls[0].error == code
    assert calls[1].arguments == '{"to": "carol", "content": "from the bridge"}'

    errors = await operator.activity(errors=True)
    assert {(c.caller, c.tool) for c in errors} == {("alice", "say"), ("bea", "offer")}
    sends = await operator.activity(tool="say", limit=2)
    assert [c.caller for c in sends] == ["bea", "alice"]


async def test_reports_are_an_agents_own_and_bounded(
    url: str, live_hub: Hub, operator: OperatorClient, connect: ClientFactory
) -> None:
    dan = await connect("dan")
    await dan.report_tool_call("send", ok=True, error=None, detail=None, ms=1.5)
    (only,) = await operator.activity(caller="dan")
    # An agent's report is its word, and says so: it never reads as a call the hub saw.
    assert (only.tool, only.via, only.ms, only.witness) == ("send", "bridge", 1.5, "self-reported")
    for bad in ({"tool": "Send!"}, {"ms": -1.0}, {"error": "x" * 80}):
        args = {"tool": "send", "ok": False, "error": "not_found", "detail": None, "ms": 1.0}
        args.update(bad)
        with pytest.raises(InvalidRequest):
            await dan.report_tool_call(**args)  # type: ignore[arg-type]
    async with HubClient(url, token=live_hub.operator.token) as as_operator:
        with pytest.raises(Forbidden):
            await as_operator.report_tool_call("send", ok=True, error=None, detail=None, ms=1)
    async with OperatorClient(url, token=dan.token) as agent_reading:
        with pytest.raises(Forbidden):
            await agent_reading.activity()


async def test_a_calls_arguments_are_shown_redacted_and_cut_short(
    live_hub: Hub, operator: OperatorClient, connect: ClientFactory
) -> None:
    erin = await connect("erin")
    secret = "sk-live-0123456789abcdef"
    arguments = {
        "to": "bob",
        "api_key": secret,
        "nested": {"Authorization": f"Bearer {secret}", "path": "src/app.py"},
        "sessionHandle": secret,
        "content": "x" * 1000,
    }
    await erin.report_tool_call(
        "fetch", ok=True, error=None, detail=None, ms=2.0, arguments=arguments
    )
    (only,) = await operator.activity(caller="erin")
    assert only.arguments is not None
    assert secret not in only.arguments
    assert only.arguments.startswith(
        '{"to": "bob", "api_key": "[redacted]", "nested": {"Authorization": "[redacted]", '
        '"path": "src/app.py"}, "sessionHandle": "[redacted]", "content": "xxx'
    )
    assert len(only.arguments) <= 401
