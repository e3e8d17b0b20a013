"""The transcript download: formats, time ranges, bad input."""

from __future__ import annotations

import json

import pytest

from caucus.errors import InvalidRequest
from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from tests.conftest import ClientFactory


async def test_the_transcript_exports_as_json_markdown_and_text(
    connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, _ = await connect("alice"), await connect("bob")
    await alice.send("bob", "first line\nsecond line")
    await alice.send("all", "<b>not html</b>")
    await operator.say("bob", "from the operator")
    data = json.loads(await operator.export("json"))
    assert [m["content"] for m in data["messages"]] == [
        "first line\nsecond line",
        "<b>not html</b>",
        "from the operator",
    ]
    assert data["messages"][0]["delivered_to"] == ["bob"]
    markdown = await operator.export("markdown")
    assert markdown.startswith("# Caucus transcript")
    assert "**alice → bob**" in markdown
    assert "> first line\n> second line" in markdown
    text = await operator.export("text")
    lines = text.splitlines()
    assert "alice -> bob [chat]: first line" in lines[0]
    assert lines[1] == "    second line"
    assert "operator -> bob [operator]: from the operator" in lines[-1]


async def test_a_time_range_selects_messages(
    connect: ClientFactory, operator: OperatorClient, live_hub: Hub
) -> None:
    alice, _ = await connect("alice"), await connect("bob")
    await alice.send("bob", "old")
    middle = live_hub.clock.now()
    await alice.send("bob", "new")
    after = json.loads(await operator.export(since=str(middle)))
    assert [m["content"] for m in after["messages"]] == ["new"]
    before = json.loads(await operator.export(until=str(middle)))
    assert [m["content"] for m in before["messages"]] == ["old"]
    iso = json.loads(await operator.export(since="2000-01-01T00:00:00Z"))
    assert len(iso["messages"]) == 2


@pytest.mark.parametrize(
    ("args", "field"),
    [({"since": "yesterday"}, "since"), ({"since": "20", "until": "10"}, "until")],
)
async def test_bad_export_parameters_are_422(
    operator: OperatorClient, args: dict[str, str], field: str
) -> None:
    with pytest.raises(InvalidRequest) as caught:
        await operator.export("json", **args)
    assert caught.value.extra["field"] == field


async def test_an_unknown_format_is_422(operator: OperatorClient) -> None:
    with pytest.raises(InvalidRequest):
        await operator.export("pdf")
