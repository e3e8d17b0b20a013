"""A tool's structured content is its view of the wire noun (issue 50): compact (ISO times, no
nulls, nothing empty in a list's items), valid under the output schema the catalog lists, and
described item by item in the protocol's `results` section."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from caucus.mcp import views as v
from caucus.mcp.tools import Catalog
from caucus.protocol import section
from caucus.wire.messages import InboundMessage
from caucus.wire.work import TaskEventInfo, TaskInfo, TaskList


async def _watch(*_: Any) -> None:
    return None


TOOLS = Catalog(watch_for=_watch).tools


def _task(**changes: Any) -> TaskInfo:
    fields: dict[str, Any] = {
        "task_id": "t_1",
        "sender": "alice",
        "worker": "bob",
        "subject": None,
        "content": "parse it",
        "thread": "m_0123456789abcdef012345",
        "state": "pending",
        "a2a_state": "submitted",
        "created_at": 1_780_000_000.25,
        "updated_at": 1_780_000_060.75,
        "expires_at": 1_780_003_600.0,
        "result": None,
        "error": None,
        "question": None,
        "answer": None,
        "history": [
            TaskEventInfo(ts=1_780_000_000.25, state="pending", actor="alice", detail=None)
        ],
        "blocked_by": [],
    }
    return TaskInfo.model_validate(fields | changes)


def test_a_task_list_shows_what_a_model_acts_on_and_no_more() -> None:
    shown = v.TASKS.of(TaskList(tasks=[_task()]))
    assert shown == {
        "tasks": [
            {
                "task_id": "t_1",
                "sender": "alice",
                "worker": "bob",
                "content": "parse it",
                "state": "pending",
                "priority": 2,
                "blocked": False,
                "updated_at": "2026-05-28T20:27:40Z",
            }
        ]
    }
    assert v.TASKS.of(TaskList(tasks=[])) == {"tasks": []}  # a top-level list stays, empty


def test_a_message_reads_its_number_and_hides_an_automatic_thread() -> None:
    base = {"seq": 23, "id": "m_1", "ts": 1_780_000_000.0, "sender": "alice", "to": "bob"}
    base |= {"kind": "chat", "content": "yes", "meta": None, "redelivered": False}
    base |= {"delivery_count": 1}
    reply = InboundMessage.model_validate(
        base | {"thread": "m_0123456789abcdef012345", "reply_seq": 22, "reply_sender": "bob"}
    )
    named = InboundMessage.model_validate(base | {"thread": "parser"})
    item = v.HEARD.of({"messages": [reply]})["messages"][0]
    assert (item["reply_seq"], item["reply_sender"]) == (22, "bob")
    assert not {"thread", "reply_to", "delivery_count"} & set(item)
    assert v.HEARD.of({"messages": [named]})["messages"][0]["thread"] == "parser"


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "subject": st.none() | st.text(max_size=5),
                "result": st.none() | st.text(max_size=5),
                "blocked_by": st.lists(st.text(min_size=1, max_size=4), max_size=2),
                "updated_at": st.floats(min_value=0, max_value=4_000_000_000),
            }
        ),
        max_size=3,
    )
)
def test_every_shown_task_list_is_valid_under_the_listed_schema(changes: list[Any]) -> None:
    shown = v.TASKS.of(TaskList(tasks=[_task(**c) for c in changes]))
    jsonschema.validate(shown, TOOLS["task"].view.schema())
    for item in shown["tasks"]:
        assert None not in item.values()
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", item["updated_at"])


def _item_views() -> dict[tuple[str, str], v.View]:
    """Every list of nouns a tool's result holds, by tool and field, nested lists included."""
    found: dict[tuple[str, str], v.View] = {}

    def walk(tool: str, view: v.View) -> None:
        for name, kind in view.fields.items():
            inner = kind.kind if isinstance(kind, v.Pick) else kind
            if isinstance(inner, v.Items):
                found[(tool, name)] = inner.view
                walk(tool, inner.view)
            elif isinstance(inner, v.View):
                walk(tool, inner)

    for name, tool in TOOLS.items():
        walk(name, tool.view)
    return found


def test_the_protocol_describes_every_list_a_result_holds_field_by_field() -> None:
    text = section("results")
    described = {
        (m["tool"], m["field"]): [f.split(" (")[0].strip() for f in m["fields"].split(", ")]
        for m in re.finditer(r"^- (?P<tool>\w+) `(?P<field>\w+)\[\]`: (?P<fields>.+)$", text, re.M)
    }
    shown = {key: list(view.fields) for key, view in _item_views().items()}
    assert described == shown


def test_every_output_schema_types_every_field_of_its_view() -> None:
    for tool in TOOLS.values():
        schema = tool.view.schema()
        assert schema["type"] == "object"
        assert list(schema["properties"]) == list(tool.view.fields)
        assert all("type" in p for p in schema["properties"].values()), tool.name
