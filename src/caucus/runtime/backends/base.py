"""The backend protocol. A run takes the history (the system prompt first) and the tools, puts
every message it produces on the sink as it goes (a tool call, each tool's result, the answer),
and returns the outcome: the answer's text. It raises `BackendError` when the run fails."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from caucus.runtime.chat import ChatMessage
from caucus.runtime.tools.executor import ToolExecutor, ToolObserver


class BackendError(Exception):
    """A run that could not finish: the model's server failed or answered what cannot be
    used. The message says what, for the operator."""


@dataclass(frozen=True, slots=True)
class RunOutcome:
    reply: str


class MessageSink(Protocol):
    async def put(self, message: ChatMessage) -> None: ...


class AgentBackend(Protocol):
    async def run(
        self,
        history: Sequence[ChatMessage],
        sink: MessageSink,
        tools: ToolExecutor,
        observer: ToolObserver | None = None,
    ) -> RunOutcome: ...

    async def close(self) -> None: ...
