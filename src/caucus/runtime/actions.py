"""What the orchestrator asks of the agent runtime. Each action is answered by events
(`runtime.events`), never by a return value: the runtime is a reactor, and every consequence of
an action (a run's messages, its end, the follow-up run) arrives on its event stream."""

from __future__ import annotations

from dataclasses import dataclass

from caucus.models.chat import ChatMessage


@dataclass(frozen=True, slots=True)
class GetOrCreateAgent:
    """The agent called `name`: retrieved if the store knows it, else created."""

    name: str
    instructions: str  # the system prompt (without its On Start section)


@dataclass(frozen=True, slots=True)
class NewThread:
    agent_id: str


@dataclass(frozen=True, slots=True)
class AddMessage:
    """Append to a thread's history. During a run it is kept after the run's own messages,
    and the thread runs once more when the run ends."""

    thread_id: str
    message: ChatMessage


@dataclass(frozen=True, slots=True)
class RunThread:
    """Run the agent's backend over the thread's history (queued if a run is under way)."""

    thread_id: str


@dataclass(frozen=True, slots=True)
class CheckThread:
    """Report the active run, or the last run's status."""

    thread_id: str


@dataclass(frozen=True, slots=True)
class InterruptRun:
    """Abort the thread's run at once: its answer is never reported, what it did stays in the
    history with a note that it was interrupted, and no follow-up run starts from it."""

    thread_id: str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class ResetThread:
    """Drop the thread's history (aborting a run under way): the next turn starts clean."""

    thread_id: str


@dataclass(frozen=True, slots=True)
class HoldThread:
    """Start nothing more on the thread: a run under way finishes, the follow-up queued behind
    it (a message added during the run) does not start."""

    thread_id: str


Action = (
    GetOrCreateAgent
    | NewThread
    | AddMessage
    | RunThread
    | CheckThread
    | InterruptRun
    | ResetThread
    | HoldThread
)
