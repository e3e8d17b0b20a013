"""A scripted model: deterministic runs for tests and for trying `caucus agent` without a model
(`--backend mock`). Shipped in `caucus.testing` for your own tests.

`MockBackend` is the one tool loop (`models/loop.py`) over `ScriptedModel`. Each run takes the
next turn of the script, a list of steps: `CallTool` asks for a tool (the loop calls it and
puts the call and its result on the sink, as for any model), `Delay` waits, `Reply` ends the
run with its text, `Fail` ends it with a backend error. A turn without a `Reply` ends with an
empty answer. When the script runs out, a run answers `echo: <the last user message>`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from caucus.models.chat import ChatMessage, Role, ToolCall
from caucus.models.loop import ToolLoop
from caucus.models.seam import BackendError, Completion, Turn


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


class ScriptedModel:
    """Answers each completion with the script's next step. A completion whose history does
    not end with a tool's result starts a run: it takes the next turn."""

    def __init__(self, turns: Iterable[Sequence[Step] | Step] = ()) -> None:
        self._turns: deque[Sequence[Step]] = deque(
            [t] if isinstance(t, Reply | CallTool | Fail | Delay) else t for t in turns
        )
        self._steps: Iterator[Step] | None = None
        self.histories: list[list[ChatMessage]] = []  # what each run was given
        self.tool_lists: list[list[str]] = []  # the tools each run was offered
        self._calls = 0

    async def complete(self, request: Completion) -> Turn:
        history = request.history
        if not history or history[-1].role is not Role.TOOL:  # a run begins
            self.histories.append(list(history))
            self.tool_lists.append([t.name for t in request.tools])
            self._steps = iter(self._turns.popleft()) if self._turns else None
            if self._steps is None:
                last = next((m.content for m in reversed(history) if m.role is Role.USER), "")
                return Turn(f"echo: {last}")
        for step in self._steps or ():
            if isinstance(step, Delay):
                await asyncio.sleep(step.seconds)
            elif isinstance(step, Fail):
                raise BackendError(step.error)
            elif isinstance(step, CallTool):
                self._calls += 1
                return Turn("", (ToolCall(f"call_{self._calls}", step.name, step.arguments),))
            else:
                return Turn(step.text)
        return Turn("")

    async def close(self) -> None:
        return


class MockBackend(ToolLoop):
    """The tool loop over a `ScriptedModel` of `turns`."""

    model: ScriptedModel

    def __init__(self, turns: Iterable[Sequence[Step] | Step] = ()) -> None:
        super().__init__(ScriptedModel(turns))

    @property
    def histories(self) -> list[list[ChatMessage]]:
        return self.model.histories

    @property
    def tool_lists(self) -> list[list[str]]:
        return self.model.tool_lists
