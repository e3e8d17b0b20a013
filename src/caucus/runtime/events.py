"""What happened, as the runtime and the orchestrator report it: typed events, each written as
one NDJSON line (`{"event": "<Name>", ...fields}`) on the agent's stdout."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from caucus.models.chat import ChatMessage


@dataclass(frozen=True, slots=True)
class NewAgentCreated:
    agent_id: str
    name: str


@dataclass(frozen=True, slots=True)
class ExistingAgentRetrieved:
    agent_id: str
    name: str


@dataclass(frozen=True, slots=True)
class NewThreadCreated:
    thread_id: str
    agent_id: str


@dataclass(frozen=True, slots=True)
class ThreadMessageAdded:
    thread_id: str
    message_id: str
    message: ChatMessage
    during_run: str | None = None  # the run under way when it was added (it runs again after)


@dataclass(frozen=True, slots=True)
class NewThreadRunCreated:
    thread_id: str
    run_id: str
    message_count: int  # the history the run started from


@dataclass(frozen=True, slots=True)
class NewThreadMessage:
    """A message the backend produced during a run (a tool call, a tool's result, the
    answer)."""

    thread_id: str
    run_id: str
    message: ChatMessage


@dataclass(frozen=True, slots=True)
class ThreadRunComplete:
    thread_id: str
    run_id: str
    reply: str
    message_count: int  # the history after the run


@dataclass(frozen=True, slots=True)
class ThreadRunFailed:
    thread_id: str
    run_id: str
    error: str


@dataclass(frozen=True, slots=True)
class ThreadRunInterrupted:
    thread_id: str
    run_id: str
    reason: str | None


@dataclass(frozen=True, slots=True)
class ThreadReset:
    thread_id: str
    dropped: int  # messages dropped from the history


@dataclass(frozen=True, slots=True)
class ThreadChecked:
    thread_id: str
    status: str  # "running", or the last run's: "none", "completed", "failed"
    run_id: str | None
    queued: bool  # another run follows the active one


@dataclass(frozen=True, slots=True)
class NoticeReceived:
    """A notice for the agent (`source`: where from, such as `prompt:on-start`): it becomes a
    turn as input does, and is recorded as a monitor event, not as something a user said."""

    source: str
    text: str


@dataclass(frozen=True, slots=True)
class InputReceived:
    text: str


@dataclass(frozen=True, slots=True)
class ControlReceived:
    """The operator's control (`interrupt`, `reset`, `stop`), as the agent obeyed it."""

    action: str
    reason: str | None


@dataclass(frozen=True, slots=True)
class LoopDampened:
    """The hub connector stopped answering `to`: they answered each other `replies` times in
    `window` seconds (the operator's reset lifts it)."""

    to: str
    replies: int
    window: float


Event = (
    NewAgentCreated
    | ExistingAgentRetrieved
    | NewThreadCreated
    | ThreadMessageAdded
    | NewThreadRunCreated
    | NewThreadMessage
    | ThreadRunComplete
    | ThreadRunFailed
    | ThreadRunInterrupted
    | ThreadReset
    | ThreadChecked
    | NoticeReceived
    | InputReceived
    | ControlReceived
    | LoopDampened
)

# How a run ended: what an observer that answers for the agent waits for.
RunEnded = ThreadRunComplete | ThreadRunFailed | ThreadRunInterrupted
# Whoever follows the agent's events: the stdout writer, the session log, the connectors.
Observer = Callable[[Event], None]


def record(event: Event) -> dict[str, Any]:
    """The NDJSON object for an event."""
    out: dict[str, Any] = {"event": type(event).__name__}
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        out[f.name] = value.record() if isinstance(value, ChatMessage) else value
    return out
