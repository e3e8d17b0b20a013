"""A scripted backend: deterministic runs for tests and for trying `caucus agent` without a
model (`--backend mock`). Shipped in `caucus.testing` for your own tests.

Each run takes the next turn of the script, a list of steps: `CallTool` asks for a tool (the
call and its result go on the sink, as a model's would), `Delay` waits, `Reply` ends the run
with its text, `Fail` ends it with a backend error. A turn without a `Reply` ends with an empty
answer. When the script runs out, a run answers `echo: <the last user message>`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from caucus.runtime.backends.base import BackendError, MessageSink, RunOutcome
from caucus.runtime.chat import ChatMessage, Role, ToolCall, assistant, tool_result
from caucus.runtime.tools.executor import ToolExecutor, ToolObserver


@dataclass(frozen=True, slots=True)
class Reply:
    text: str


@dataclass(frozen=True, slots=True)
class CallTool:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Fail:
    error: str


@dataclass(frozen=True, slots=True)
class Delay:
    seconds: float


Step = Reply | CallTool | Fail | Delay


class MockBackend:
    def __init__(self, turns: Iterable[Sequence[Step] | Step] = ()) -> None:
        self._turns: deque[Sequence[Step]] = deque(
            [t] if isinstance(t, Reply | CallTool | Fail | Delay) else t for t in turns
        )
        self.histories: list[list[ChatMessage]] = []  # what each run was given
        self.tool_lists: list[list[str]] = []  # the tools each run was offered
        self._calls = 0

    async def run(
        self,
        history: Sequence[ChatMessage],
        sink: MessageSink,
        tools: ToolExecutor,
        observer: ToolObserver | None = None,
    ) -> RunOutcome:
        self.histories.append(list(history))
        self.tool_lists.append([t.name for t in await tools.list_tools()])
        if not self._turns:
            last = next((m.content for m in reversed(history) if m.role is Role.USER), "")
            reply = assistant(f"echo: {last}")
            await sink.put(reply)
            return RunOutcome(reply.content)
        for step in self._turns.popleft():
            if isinstance(step, Delay):
                await asyncio.sleep(step.seconds)
            elif isinstance(step, Fail):
                raise BackendError(step.error)
            elif isinstance(step, CallTool):
                self._calls += 1
                call = ToolCall(f"call_{self._calls}", step.name, step.arguments)
                await sink.put(assistant("", (call,)))
                if observer is not None:
                    observer.called(call)
                result = await tools.call(call.name, call.arguments)
                if observer is not None:
                    observer.answered(call, result)
                await sink.put(tool_result(call, result.content))
            else:
                await sink.put(assistant(step.text))
                return RunOutcome(step.text)
        await sink.put(assistant(""))
        return RunOutcome("")

    async def close(self) -> None:
        return
