"""Code mode: one run_code round fans out several tool calls and returns a filtered result;
every call is checked, counted and audited; mutating calls warn; the sandbox refuses a loop
past its time limit, a heap past its cap, files and network, each with a clear error; state
lives for one run."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from caucus.models.tools import ToolSpec
from caucus.runtime.tools.codemode import CodeModeTools, py_name, stub
from caucus.runtime.tools.functions import FunctionTools

PEOPLE = [
    {"name": "ann", "team": "db", "age": 31},
    {"name": "bob", "team": "web", "age": 45},
    {"name": "cy", "team": "db", "age": 27},
]


def toolbox() -> FunctionTools:
    tools = FunctionTools()
    tools.add(
        "list-people",
        lambda team=None: json.dumps({"people": [p for p in PEOPLE if team in (None, p["team"])]}),
        description="People, optionally of one team.",
        parameters={"type": "object", "properties": {"team": {"type": "string"}}},
    )
    tools.add(
        "get_age",
        lambda name: json.dumps(
            {"name": name, "age": next(p["age"] for p in PEOPLE if p["name"] == name)}
        ),
        description="A person's age.",
        parameters={
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    )
    tools.add(
        "retire",
        lambda name: f"{name} retired",
        description="Retire a person.",
        parameters={
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
        destructive=True,
    )
    return tools


@pytest.fixture
async def code() -> AsyncIterator[tuple[CodeModeTools, FunctionTools]]:
    inner = toolbox()
    tools = CodeModeTools(inner, time_limit=1.0, memory_limit=16 * 1024 * 1024, call_budget=5)
    await tools.open()
    try:
        yield tools, inner
    finally:
        await tools.close()


async def run(tools: CodeModeTools, source: str) -> tuple[bool, dict[str, Any]]:
    await tools.list_tools()
    result = await tools.call("run_code", {"code": source})
    return result.is_error, json.loads(result.content)


async def test_one_round_fans_out_and_returns_a_filtered_result(
    code: tuple[CodeModeTools, FunctionTools],
) -> None:
    tools, inner = code
    failed, body = await run(
        tools,
        "import asyncio\n"
        "people = await list_people(team='db')\n"
        "ages = await asyncio.gather(*[get_age(name=n) for n in names(people)])\n"
        "print('asked', len(ages))\n"
        "[a['name'] for a in ages if a['age'] > 30]",
    )
    assert not failed
    assert body["result"] == ["ann"]
    assert body["printed"] == "asked 2\n"
    assert [c["tool"] for c in body["calls"]] == ["list-people", "get_age", "get_age"]
    assert all(c["ok"] for c in body["calls"])
    assert [name for name, _ in inner.calls] == ["list-people", "get_age", "get_age"]
    assert "warnings" not in body


async def test_calls_are_checked_budgeted_and_mutations_warn(
    code: tuple[CodeModeTools, FunctionTools],
) -> None:
    tools, inner = code
    failed, body = await run(tools, "await get_age(nam='ann')")
    assert failed
    assert "unknown argument(s) nam" in body["error"]
    assert inner.calls == []  # never reached the tool
    failed, body = await run(tools, "await get_age()")
    assert "missing argument(s) name" in body["error"]
    failed, body = await run(tools, "await get_age(name=3)")
    assert "name should be str, not int" in body["error"]
    failed, body = await run(tools, "for _ in range(9):\n    await get_age(name='bob')\n")
    assert failed
    assert "call budget of 5" in body["error"]
    assert len(body["calls"]) == 6  # five made, the sixth refused
    failed, body = await run(tools, "await retire(name='bob')")
    assert not failed
    assert body["warnings"] == ["retire changes things (it was called)"]


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("while True:\n    pass", "TimeoutError: the code ran past 1 s, the limit per run"),
        ("x = 'y' * 100_000_000\nlen(x)", "MemoryError: the code's data grew past 16 MB"),
        (  # what a run prints has its own cap, and says so (not "memory")
            "for i in range(10_000):\n    print('a line of output ' * 5)",
            "OutputLimit: the code printed more than 20,000 bytes",
        ),
        ("open('/etc/passwd').read()", "no files, network or imports"),
        ("import socket", "no files, network or imports"),
    ],
)
async def test_the_sandbox_refuses_with_a_clear_error(
    code: tuple[CodeModeTools, FunctionTools], source: str, says: str
) -> None:
    tools, _ = code
    async with tools.run_scope():
        failed, body = await run(tools, source)
    assert failed
    assert says in body["error"]


async def test_state_lives_for_one_run(code: tuple[CodeModeTools, FunctionTools]) -> None:
    tools, _ = code
    async with tools.run_scope():
        await run(tools, "kept = 41")
        assert (await run(tools, "kept + 1"))[1]["result"] == 42
    async with tools.run_scope():
        failed, body = await run(tools, "kept")
    assert failed
    assert "NameError" in body["error"]


def test_stubs_show_the_model_names_arguments_and_what_comes_back() -> None:
    spec = ToolSpec(
        "get-sum",
        "Add two numbers.\nMore text.",
        {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a"],
        },
        output={"type": "object", "properties": {"sum": {"type": "number"}}},
    )
    assert py_name("get-sum") == "get_sum"
    assert py_name("class") == "t_class"
    assert stub(spec) == (
        "async def get_sum(*, a: float, b: float | None = None) -> Any:\n"
        '    """Add two numbers. Returns: {sum: float}."""'
    )
