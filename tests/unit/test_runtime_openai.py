"""The OpenAI-compatible backend against the scripted fake server over real HTTP: streaming,
the bounded tool loop, tool errors as text, calls written into the text by weak models, and
errors that say what happened."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from caucus.models.chat import ChatMessage, Role, assistant, user
from caucus.models.loop import BUDGET_NOTE, MAX_TOOL_ROUNDS
from caucus.models.openai_compat import OpenAIBackend
from caucus.models.seam import BackendError
from caucus.models.toolcalls import calls_in_text
from caucus.models.tools import NoTools
from caucus.runtime.tools.functions import FunctionTools
from caucus.testing import (
    Call,
    FakeOpenAI,
    Say,
    Status,
    last_user,
    offered,
    serve_fake,
    tool_messages,
)
from caucus.testing.fake_openai import Script

SYSTEM = ChatMessage(Role.SYSTEM, "be brief")


class Sink:
    def __init__(self) -> None:
        self.messages: list[ChatMessage] = []

    async def put(self, message: ChatMessage) -> None:
        self.messages.append(message)


@pytest.fixture
async def served() -> AsyncIterator[tuple[FakeOpenAI, OpenAIBackend]]:
    fake = FakeOpenAI(lambda request: [Say("unscripted")])
    async with serve_fake(fake) as url:
        backend = OpenAIBackend(model="fake-model", base_url=f"{url}/v1", api_key=None)
        yield fake, backend
        await backend.close()


def scripted(fake: FakeOpenAI, script: Script) -> None:
    fake.script = script


def weather_tools() -> FunctionTools:
    tools = FunctionTools()
    tools.add(
        "weather",
        lambda city: f"sunny in {city}",
        description="the weather in a city",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    )

    def broken() -> str:
        raise RuntimeError("the sensor is offline")

    tools.add("broken", broken)
    return tools


async def test_a_streamed_answer_is_the_reply(served: tuple[FakeOpenAI, OpenAIBackend]) -> None:
    fake, backend = served
    scripted(fake, lambda r: [Say(f"you said {last_user(r)!r}, a long answer in pieces")])
    sink = Sink()
    outcome = await backend.run([SYSTEM, user("hi")], sink, NoTools())
    assert outcome.reply == "you said 'hi', a long answer in pieces"
    assert [m.content for m in sink.messages] == [outcome.reply]
    (request,) = fake.requests
    assert request["stream"] is True
    assert "tools" not in request  # no tools, none offered


async def test_tool_calls_run_and_their_results_and_errors_go_back_as_text(
    served: tuple[FakeOpenAI, OpenAIBackend],
) -> None:
    fake, backend = served

    def script(request: dict[str, Any]) -> list[Any]:
        if not tool_messages(request):
            return [Call("weather", {"city": "Oslo"}), Call("broken")]
        return [Say("done: " + "; ".join(m["content"] for m in tool_messages(request)))]

    scripted(fake, script)
    tools = weather_tools()
    sink = Sink()
    outcome = await backend.run([SYSTEM, user("weather?")], sink, tools)
    assert outcome.reply == "done: sunny in Oslo; Error: RuntimeError: the sensor is offline"
    assert tools.calls == [("weather", {"city": "Oslo"}), ("broken", {})]
    asked = sink.messages[0]
    assert [c.name for c in asked.tool_calls] == ["weather", "broken"]
    second = fake.requests[1]["messages"]
    # The assistant message that carried the calls goes back with empty content, not none.
    assert second[2]["role"] == "assistant"
    assert second[2]["content"] == ""
    assert [m["tool_call_id"] for m in second[3:]] == [c["id"] for c in second[2]["tool_calls"]]
    assert offered(fake.requests[0]) == ["weather", "broken"]


async def test_after_eight_tool_rounds_the_tools_are_withdrawn_with_a_user_note(
    served: tuple[FakeOpenAI, OpenAIBackend],
) -> None:
    fake, backend = served
    scripted(
        fake,
        lambda r: [Call("weather", {"city": "Rome"})] if "tools" in r else [Say("giving up")],
    )
    outcome = await backend.run([SYSTEM, user("loop")], Sink(), weather_tools())
    assert outcome.reply == "giving up"
    assert len(fake.requests) == MAX_TOOL_ROUNDS + 1
    assert all("tools" in r for r in fake.requests[:MAX_TOOL_ROUNDS])
    ninth = fake.requests[MAX_TOOL_ROUNDS]
    assert "tools" not in ninth
    assert ninth["messages"][-1] == {"role": "user", "content": BUDGET_NOTE}
    assert [m["role"] for m in ninth["messages"]].count("system") == 1


async def test_a_tool_call_after_the_budget_is_a_backend_error(
    served: tuple[FakeOpenAI, OpenAIBackend],
) -> None:
    fake, backend = served
    scripted(fake, lambda r: [Call("weather", {"city": "Rome"})])
    with pytest.raises(BackendError, match="after its 8 tool rounds"):
        await backend.run([SYSTEM, user("loop")], Sink(), weather_tools())


async def test_calls_written_as_hermes_tags_or_fenced_json_are_taken_as_calls(
    served: tuple[FakeOpenAI, OpenAIBackend],
) -> None:
    fake, backend = served
    tagged = '<tool_call>\n{"name": "weather", "arguments": {"city": "Lima"}}\n</tool_call>'
    fenced = 'Let me look.\n```json\n{"name": "weather", "parameters": {"city": "Quito"}}\n```'
    for text, city in ((tagged, "Lima"), (fenced, "Quito")):
        fake.requests.clear()
        scripted(
            fake,
            lambda r, text=text: [Say(text)] if not tool_messages(r) else [Say("ok")],  # type: ignore[misc]
        )
        tools = weather_tools()
        outcome = await backend.run([SYSTEM, user("w")], Sink(), tools)
        assert outcome.reply == "ok"
        assert tools.calls == [("weather", {"city": city})]


async def test_arguments_that_are_not_json_go_back_as_an_error(
    served: tuple[FakeOpenAI, OpenAIBackend],
) -> None:
    fake, backend = served

    def script(request: dict[str, Any]) -> list[Any]:
        return [Say("fine")] if tool_messages(request) else [Call("weather", {})]

    scripted(fake, script)
    original = fake._calls  # the fake writes good JSON; make this one call's arguments broken

    def broken_calls(number: int, said: list[Any]) -> list[dict[str, Any]]:
        calls = original(number, said)
        for c in calls:
            c["function"]["arguments"] = '{"city": '
        return calls

    fake._calls = broken_calls  # type: ignore[method-assign]
    tools = weather_tools()
    await backend.run([SYSTEM, user("w")], Sink(), tools)
    assert tools.calls == []
    result = tool_messages(fake.requests[1])[0]["content"]
    assert result.startswith("Error: the arguments were not valid JSON")


async def test_consecutive_user_messages_are_sent_as_one(
    served: tuple[FakeOpenAI, OpenAIBackend],
) -> None:
    fake, backend = served
    scripted(fake, lambda r: [Say("ok")])
    history = [SYSTEM, user("a"), assistant("b"), user("c"), user("d")]
    await backend.run(history, Sink(), NoTools())
    sent = fake.requests[0]["messages"]
    assert [(m["role"], m["content"]) for m in sent] == [
        ("system", "be brief"),
        ("user", "a"),
        ("assistant", "b"),
        ("user", "c\n\nd"),
    ]


async def test_a_server_error_is_a_backend_error_that_says_what_the_server_said(
    served: tuple[FakeOpenAI, OpenAIBackend],
) -> None:
    fake, backend = served
    scripted(fake, lambda r: [Status(500, "the model crashed")])
    with pytest.raises(BackendError, match="answered 500: the model crashed"):
        await backend.run([SYSTEM, user("x")], Sink(), NoTools())


async def test_an_unreachable_server_is_reported_before_any_run() -> None:
    backend = OpenAIBackend(model="m", base_url="http://127.0.0.1:9/v1", api_key=None, timeout=2)
    with pytest.raises(BackendError, match=r"cannot reach the model server at .*--base-url"):
        await backend.check()
    await backend.close()


def test_text_without_calls_or_with_unknown_tools_is_left_alone() -> None:
    ids = iter(f"c{n}" for n in range(10))
    text = 'Here: ```json\n{"name": "other", "arguments": {}}\n```'
    assert calls_in_text(text, {"weather"}, lambda: next(ids)) == (text, [])
    assert calls_in_text("plain", {"weather"}, lambda: next(ids)) == ("plain", [])
    several = json.dumps([{"name": "weather", "arguments": {"city": "A"}}] * 2)
    rest, calls = calls_in_text(f"<tool_call>{several}</tool_call>", {"weather"}, lambda: next(ids))
    assert rest == ""
    assert [c.arguments for c in calls] == [{"city": "A"}, {"city": "A"}]
    unclosed = '<tool_call>{"name": "weather", "arguments": "{\\"city\\": \\"B\\"}"}'
    assert calls_in_text(unclosed, {"weather"}, lambda: next(ids))[1][0].arguments == {"city": "B"}


async def test_the_first_request_can_force_a_tool_and_only_the_first(
    served: tuple[FakeOpenAI, OpenAIBackend],
) -> None:
    fake, first = served
    url = first.base_url
    backend = OpenAIBackend(model="m", base_url=url, api_key=None, start_with_tool="weather")

    def script(request: dict[str, Any]) -> list[Any]:
        return [Say("done")] if tool_messages(request) else [Call("weather", {"city": "Oslo"})]

    scripted(fake, script)
    await backend.run([SYSTEM, user("go")], Sink(), weather_tools())
    await backend.run([SYSTEM, user("again")], Sink(), weather_tools())
    chosen = [r.get("tool_choice") for r in fake.requests]
    assert chosen == [{"type": "function", "function": {"name": "weather"}}, None, None, None]
    await backend.close()


async def test_a_temperature_is_sent_only_when_one_is_given(
    served: tuple[FakeOpenAI, OpenAIBackend],
) -> None:
    fake, default = served
    cool = OpenAIBackend(model="m", base_url=default.base_url, api_key=None, temperature=0.0)
    scripted(fake, lambda _: [Say("ok")])
    await default.run([SYSTEM, user("go")], Sink(), weather_tools())
    await cool.run([SYSTEM, user("go")], Sink(), weather_tools())
    assert [r.get("temperature", "unset") for r in fake.requests] == ["unset", 0.0]
    await cool.close()


async def test_a_call_name_repeated_on_every_chunk_is_read_once(
    served: tuple[FakeOpenAI, OpenAIBackend],
) -> None:
    """llama-cpp-python's server sends the call's id and name with every piece of it."""
    fake, backend = served
    fake.repeat_names = True

    def script(request: dict[str, Any]) -> list[Any]:
        return [Say("done")] if tool_messages(request) else [Call("weather", {"city": "Oslo"})]

    scripted(fake, script)
    sink = Sink()
    await backend.run([SYSTEM, user("go")], sink, weather_tools())
    asked = sink.messages[0]
    assert [(c.name, c.arguments) for c in asked.tool_calls] == [("weather", {"city": "Oslo"})]
