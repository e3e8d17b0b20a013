"""The agent runtime and its orchestrator, over the scripted MockBackend: threads, turns, the
history after a run, follow-up runs, On Start, and the end of the input."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Generic, TypeVar

from caucus.models.chat import Role, user
from caucus.models.tools import NoTools
from caucus.runtime.actions import AddMessage, CheckThread, GetOrCreateAgent, NewThread, RunThread
from caucus.runtime.agent import AgentRuntime
from caucus.runtime.events import (
    Event,
    NewThreadMessage,
    NewThreadRunCreated,
    ThreadChecked,
    ThreadRunComplete,
    record,
)
from caucus.runtime.ids import CountingIds, MemoryKV
from caucus.runtime.onstart import Prompt
from caucus.runtime.orchestrator import Control, Notice, Orchestrator
from caucus.testing import CallTool, Delay, Fail, MockBackend, Reply

T = TypeVar("T")


class Feed(Generic[T]):
    """An async iterator the test writes to, and ends."""

    def __init__(self, *items: T) -> None:
        self._queue: asyncio.Queue[tuple[bool, T | None]] = asyncio.Queue()
        for item in items:
            self.put(item)

    def put(self, item: T) -> None:
        self._queue.put_nowait((False, item))

    def end(self) -> None:
        self._queue.put_nowait((True, None))

    def __aiter__(self) -> AsyncIterator[T]:
        return self

    async def __anext__(self) -> T:
        ended, item = await self._queue.get()
        if ended:
            raise StopAsyncIteration
        return item  # type: ignore[return-value]


def ended(*lines: str) -> Feed[str]:
    feed = Feed(*lines)
    feed.end()
    return feed


class Harness:
    def __init__(self, backend: MockBackend, prompt: Prompt | None = None, **kw: Any) -> None:
        self.backend = backend
        self.runtime = AgentRuntime(backend, NoTools(), ids=CountingIds(), kv=MemoryKV())
        self.events: list[dict[str, Any]] = []
        self._written = asyncio.Event()
        self.orchestrator = Orchestrator(
            self.runtime,
            name="tester",
            prompt=prompt or Prompt("be brief", None),
            write=self._write,
            **kw,
        )

    def _write(self, event: Event) -> None:
        self.events.append(record(event))
        self._written.set()

    async def until(self, kind: str, count: int = 1) -> None:
        """Wait (5 s at most) until `count` events of `kind` have been written."""
        async with asyncio.timeout(5):
            while len(self.of(kind)) < count:
                self._written.clear()
                await self._written.wait()

    async def run(self, lines: Feed[str], notices: Feed[Notice | Control] | None = None) -> None:
        await asyncio.wait_for(self.orchestrator.run(lines, notices), 10)

    def kinds(self, *wanted: str) -> list[str]:
        return [e["event"] for e in self.events if not wanted or e["event"] in wanted]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == kind]


async def test_an_input_line_becomes_a_turn_with_the_system_prompt_first() -> None:
    h = Harness(MockBackend([Reply("hi there")]))
    await h.run(ended("hello", "   "))  # a blank line is no input
    assert h.kinds("InputReceived") == ["InputReceived"]
    assert [k for k in h.kinds() if k != "InputReceived"] == [
        "NewAgentCreated",
        "NewThreadCreated",
        "ThreadMessageAdded",
        "NewThreadRunCreated",
        "NewThreadMessage",
        "ThreadRunComplete",
    ]
    (history,) = h.backend.histories
    assert [(m.role, m.content) for m in history] == [
        (Role.SYSTEM, "be brief"),
        (Role.USER, "hello"),
    ]
    assert h.of("ThreadRunComplete")[0]["reply"] == "hi there"
    assert h.of("ThreadRunComplete")[0]["message_count"] == 2


async def test_buffered_input_never_creates_a_second_thread() -> None:
    h = Harness(MockBackend())
    await h.run(ended("one", "two", "three"))
    assert len(h.of("NewThreadCreated")) == 1
    # Everything reached the model, in order (what arrived before the thread was folded into
    # its first message).
    said = [m.content for m in h.backend.histories[-1] if m.role is Role.USER]
    assert "\n\n".join(said) == "one\n\ntwo\n\nthree"


async def test_the_next_turn_waits_for_the_next_message() -> None:
    lines = Feed("first")
    h = Harness(MockBackend([Reply("a"), Reply("b")]))
    running = asyncio.ensure_future(h.run(lines))
    await h.until("ThreadRunComplete")
    assert len(h.of("NewThreadRunCreated")) == 1  # no second run without a second message
    lines.put("second")
    lines.end()
    await running
    assert [e["reply"] for e in h.of("ThreadRunComplete")] == ["a", "b"]
    assert [m.content for m in h.backend.histories[1][1:]] == ["first", "a", "second"]


async def test_notices_during_a_run_cause_exactly_one_follow_up_run() -> None:
    lines, notices = Feed("start"), Feed[Notice]()
    h = Harness(MockBackend([[Delay(0.2), Reply("slow")], Reply("follow-up")]))
    running = asyncio.ensure_future(h.run(lines, notices))
    await h.until("NewThreadRunCreated")
    for n in range(5):
        notices.put(Notice("hub", f"news {n}"))
    lines.end()
    notices.end()
    await running
    assert len(h.of("NewThreadRunCreated")) == 2
    assert [e["reply"] for e in h.of("ThreadRunComplete")] == ["slow", "follow-up"]
    added = h.of("ThreadMessageAdded")[1:]
    assert all(e["during_run"] == "run_1" for e in added)
    # The follow-up saw every notice after the first run's answer.
    follow_up = [m.content for m in h.backend.histories[1][1:]]
    assert follow_up[:2] == ["start", "slow"]
    assert follow_up[2:] == [f"[notice from hub]\nnews {n}" for n in range(5)]


async def test_messages_added_during_a_run_stay_after_its_answer() -> None:
    runtime = AgentRuntime(
        MockBackend([[CallTool("look"), Delay(0.1), Reply("done")]]),
        NoTools(),
        ids=CountingIds(),
        kv=MemoryKV(),
    )
    await runtime.apply(GetOrCreateAgent("a", "sys"))
    await runtime.apply(NewThread("agent_1"))
    await runtime.apply(AddMessage("thread_1", user("question")))
    await runtime.apply(RunThread("thread_1"))
    events: list[Any] = []

    async def until(done: Any) -> None:
        while not events or not done(events[-1]):
            events.append(await asyncio.wait_for(runtime.next_event(), 5))

    await until(lambda e: isinstance(e, NewThreadMessage) and e.message.role is Role.TOOL)
    await runtime.apply(AddMessage("thread_1", user("meanwhile")))
    await runtime.apply(CheckThread("thread_1"))
    await until(lambda e: isinstance(e, ThreadRunComplete) and e.run_id == "run_2")
    checked = next(e for e in events if isinstance(e, ThreadChecked))
    assert (checked.status, checked.run_id, checked.queued) == ("running", "run_1", True)
    first = next(e for e in events if isinstance(e, ThreadRunComplete))
    assert (first.run_id, first.message_count) == ("run_1", 5)
    history = runtime.history("thread_1")
    assert [(m.role.value, m.content) for m in history[:5]] == [
        ("user", "question"),
        ("assistant", ""),  # the tool call
        ("tool", "Error: there is no tool named 'look'"),
        ("assistant", "done"),
        ("user", "meanwhile"),  # the newest user message stays last before the follow-up
    ]
    await runtime.close()


async def test_a_failed_run_is_reported_and_the_agent_goes_on() -> None:
    h = Harness(MockBackend([Fail("model unreachable"), Reply("back")]))
    lines = Feed("one")
    running = asyncio.ensure_future(h.run(lines))
    await h.until("ThreadRunFailed")
    lines.put("two")
    lines.end()
    await running
    assert h.of("ThreadRunFailed")[0]["error"] == "model unreachable"
    assert h.of("ThreadRunComplete")[0]["reply"] == "back"
    # The failed run left no assistant message behind.
    assert [m.content for m in h.backend.histories[1][1:]] == ["one", "two"]


async def test_on_start_is_the_first_turn_folded_with_notices_queued_before_it() -> None:
    notices = Feed(Notice("hub", "a message waits"))
    h = Harness(MockBackend([Reply("ready")]), Prompt("sys", "Say hello."))
    notices.end()
    await h.run(ended(), notices)
    assert [e["source"] for e in h.of("NoticeReceived")] == ["prompt:on-start", "hub"]
    assert h.kinds("InputReceived") == []  # a notice is never recorded as input
    (history,) = h.backend.histories
    assert history[0].content == "sys"  # the On Start section is not in the system prompt
    assert history[1].content == (
        "[notice from prompt:on-start]\nSay hello.\n\n[notice from hub]\na message waits"
    )
    assert len(h.of("NewThreadRunCreated")) == 1


async def test_max_turns_stops_the_agent_after_that_many_runs() -> None:
    lines = Feed("a")
    h = Harness(MockBackend([[Delay(0.05), Reply("1")], Reply("2"), Reply("3")]), max_turns=1)
    running = asyncio.ensure_future(h.run(lines))
    await h.until("NewThreadRunCreated")
    lines.put("b")  # queues a follow-up run, which max_turns cuts off
    await running  # returns though the input never ended
    assert len(h.of("ThreadRunComplete")) == 1


async def test_a_run_cancelled_at_close_leaves_nothing_running() -> None:
    before = asyncio.all_tasks()
    runtime = AgentRuntime(
        MockBackend([[Delay(3600)]]), NoTools(), ids=CountingIds(), kv=MemoryKV()
    )
    await runtime.apply(GetOrCreateAgent("a", "sys"))
    await runtime.apply(NewThread("agent_1"))
    await runtime.apply(AddMessage("thread_1", user("wait")))
    await runtime.apply(RunThread("thread_1"))
    while not isinstance(await asyncio.wait_for(runtime.next_event(), 5), NewThreadRunCreated):
        pass
    assert runtime.busy
    await runtime.close()
    assert asyncio.all_tasks() == before


async def test_an_agent_known_by_name_is_retrieved_not_created_again() -> None:
    kv = MemoryKV()
    runtime = AgentRuntime(MockBackend(), NoTools(), ids=CountingIds(), kv=kv)
    await runtime.apply(GetOrCreateAgent("a", "one"))
    await runtime.apply(GetOrCreateAgent("a", "two"))
    first, second = await runtime.next_event(), await runtime.next_event()
    assert type(first).__name__ == "NewAgentCreated"
    assert type(second).__name__ == "ExistingAgentRetrieved"
    assert first.agent_id == second.agent_id
    assert await kv.get("agent:a") == first.agent_id


async def test_a_run_holds_the_history_as_it_was_asked_for() -> None:
    backend = MockBackend([Reply("first"), Reply("second")])
    runtime = AgentRuntime(backend, NoTools(), ids=CountingIds(), kv=MemoryKV())
    await runtime.apply(GetOrCreateAgent("a", "sys"))
    await runtime.apply(NewThread("agent_1"))
    await runtime.apply(AddMessage("thread_1", user("one")))
    await runtime.apply(RunThread("thread_1"))
    # Added before the run's task has even started: it belongs to the next run.
    await runtime.apply(AddMessage("thread_1", user("two")))
    while True:
        event = await asyncio.wait_for(runtime.next_event(), 5)
        if isinstance(event, ThreadRunComplete) and event.run_id == "run_2":
            break
    assert [[m.content for m in h[1:]] for h in backend.histories] == [
        ["one"],
        ["one", "first", "two"],
    ]
    await runtime.close()


async def test_input_arriving_as_a_run_ends_never_causes_a_second_follow_up() -> None:
    for _ in range(20):
        h = Harness(MockBackend())
        await h.run(ended("a", "b"))
        runs = len(h.of("NewThreadRunCreated"))
        assert runs in (1, 2)  # "b" joined the first turn, or ran once after it
        said = [m.content for m in h.backend.histories[-1] if m.role is Role.USER]
        assert "\n\n".join(said) == "a\n\nb"


async def test_an_interrupt_aborts_the_run_at_once_and_the_thread_says_so() -> None:
    lines, notices = Feed("tell me a long story"), Feed[Notice | Control]()
    h = Harness(MockBackend([[CallTool("look"), Delay(3600), Reply("never")], Reply("next")]))
    running = asyncio.ensure_future(h.run(lines, notices))
    await h.until("NewThreadMessage", 2)  # the tool call and its result are in
    notices.put(Control("interrupt", "off topic"))
    await h.until("ThreadRunInterrupted")
    assert h.of("ThreadRunInterrupted")[0]["reason"] == "off topic"
    assert not h.of("ThreadRunComplete")  # nothing partial is reported as an answer
    lines.put("something else")
    lines.end()
    notices.end()
    await running
    assert [e["reply"] for e in h.of("ThreadRunComplete")] == ["next"]
    follow = [(m.role.value, m.content) for m in h.backend.histories[1][1:]]
    assert follow[0] == ("user", "tell me a long story")
    assert follow[1][0] == "assistant"  # the tool call happened, and stays
    assert follow[2][0] == "tool"
    assert follow[3][1].startswith("Your reply was interrupted by the operator")
    assert follow[3][1].endswith("Reason given: off topic")
    assert follow[-1] == ("user", "something else")


async def test_a_reset_starts_the_next_turn_from_a_clean_history() -> None:
    lines, notices = Feed("first"), Feed[Notice | Control]()
    h = Harness(MockBackend([Reply("one"), Reply("two")]))
    running = asyncio.ensure_future(h.run(lines, notices))
    await h.until("ThreadRunComplete")
    notices.put(Control("reset"))
    await h.until("ThreadReset")
    assert h.of("ThreadReset")[0]["dropped"] == 2
    lines.put("again")
    lines.end()
    notices.end()
    await running
    assert [m.content for m in h.backend.histories[1][1:]] == ["again"]


async def test_stop_takes_no_more_input_lets_the_run_finish_and_ends() -> None:
    lines, notices = Feed("work"), Feed[Notice | Control]()
    h = Harness(MockBackend([[Delay(0.1), Reply("finished")], Reply("not this")]))
    running = asyncio.ensure_future(h.run(lines, notices))
    await h.until("NewThreadRunCreated")
    notices.put(Control("stop"))
    await h.until("ControlReceived")
    lines.put("ignored")  # never read, and the input never ended: stop alone ends the agent
    await running
    assert [e["reply"] for e in h.of("ThreadRunComplete")] == ["finished"]
    assert [e["action"] for e in h.of("ControlReceived")] == ["stop"]


async def test_after_a_stop_an_interrupt_still_ends_the_run_under_way_at_once() -> None:
    lines, notices = Feed("tell me a long story"), Feed[Notice | Control]()
    h = Harness(MockBackend([[Delay(3600), Reply("never")]]))
    running = asyncio.ensure_future(h.run(lines, notices))
    await h.until("NewThreadRunCreated")
    notices.put(Control("stop"))
    notices.put(Notice("bob", "a message after the stop starts nothing"))
    notices.put(Control("interrupt", "the room stopped"))
    async with asyncio.timeout(30):  # without the interrupt, the run would go on for an hour
        await running
    assert [e["action"] for e in h.of("ControlReceived")] == ["stop", "interrupt"]
    assert h.of("ThreadRunInterrupted")[0]["reason"] == "the room stopped"
    assert not h.of("NoticeReceived")
    assert len(h.of("NewThreadRunCreated")) == 1


async def test_a_stop_lets_the_run_finish_but_not_the_follow_up_queued_behind_it() -> None:
    lines, notices = Feed("work"), Feed[Notice | Control]()
    h = Harness(MockBackend([[Delay(0.3), Reply("finished")], Reply("not this")]))
    running = asyncio.ensure_future(h.run(lines, notices))
    await h.until("NewThreadRunCreated")
    notices.put(Notice("bob", "more work, during the run"))  # queues a follow-up run
    await h.until("ThreadMessageAdded", 2)
    notices.put(Control("stop"))
    await running
    assert [e["reply"] for e in h.of("ThreadRunComplete")] == ["finished"]
    assert len(h.of("NewThreadRunCreated")) == 1
