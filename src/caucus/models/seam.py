"""The seams a model is reached through.

`Model` is one completion: the conversation so far and the tools on offer in, one answer out
(text, and the tools it calls). The tool loop above it (`models/loop.py`) is written once, for
every model. `AgentBackend` is a whole run (what the native agent drives): the loop over a
model, or a backend that loops itself (the Claude Code CLI). A run puts every message it
produces on the sink as it goes (a tool call, each tool's result, the answer) and returns the
outcome; it raises `BackendError` when it cannot finish.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from caucus.models.chat import ChatMessage, ToolCall
from caucus.models.tools import ToolExecutor, ToolObserver, ToolSpec


class BackendError(Exception):
    """A run that could not finish: the model's server failed or answered what cannot be
    used. The message says what, for the operator."""


@dataclass(frozen=True, slots=True)
class RunOutcome:
    reply: str


@dataclass(frozen=True, slots=True)
class Completion:
    """One request to a model: the conversation (the system prompt first), the tools it may
    call (none: it must answer), one it must call (`forced`), the schema an answer with no
    tools must meet (`answer_schema`, for a server that constrains to one)."""

    history: Sequence[ChatMessage]
    tools: Sequence[ToolSpec] = ()
    forced: str | None = None
    answer_schema: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """A model's answer: its text and the tools it calls (none: the answer is final)."""

    content: str
    calls: tuple[ToolCall, ...] = field(default_factory=tuple)


class Model(Protocol):
    async def complete(self, request: Completion) -> Turn: ...

    async def close(self) -> None: ...


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
