"""Typed events that state changes emit to the notifier (immutable by convention: not frozen,
because one is built for every routed message and frozen dataclasses cost several times more).

Subscribers (long-poll wake-ups, the console feed, transcripts, the ledger) react to these;
services never push to a UI themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from caucus.domain.activity import ToolCallRecord
from caucus.domain.decisions import Decision
from caucus.domain.deliberations import Deliberation
from caucus.domain.floors import Floor
from caucus.domain.forms import Form
from caucus.domain.messages import Message


@dataclass(slots=True)
class Event:
    ts: float


@dataclass(slots=True)
class MessageRouted(Event):
    message: Message
    delivered_to: tuple[str, ...]
    recipient_ids: tuple[int, ...]


@dataclass(slots=True)
class PeerJoined(Event):
    name: str
    how: str  # created | reaffirmed | replaced | revived


@dataclass(slots=True)
class PeerLeft(Event):
    name: str
    reason: str  # left | kicked | forgotten


@dataclass(slots=True)
class PeerReaped(Event):
    name: str


@dataclass(slots=True)
class PeerOffline(Event):
    """The peer's session ended and said so: it keeps its identity for the grace period."""

    name: str


@dataclass(slots=True)
class StatusChanged(Event):
    name: str
    status: str


@dataclass(slots=True)
class ChannelJoined(Event):
    channel: str
    name: str


@dataclass(slots=True)
class ChannelLeft(Event):
    channel: str
    name: str


@dataclass(slots=True)
class ChannelChanged(Event):
    """The operator made a channel private or public."""

    channel: str
    private: bool


@dataclass(slots=True)
class TopicChanged(Event):
    channel: str
    topic: str
    by: str


@dataclass(slots=True)
class ModeChanged(Event):
    mode: str
    reason: str | None = None


@dataclass(slots=True)
class PeerPaused(Event):
    name: str
    paused: bool


@dataclass(slots=True)
class ChannelClosed(Event):
    channel: str


@dataclass(slots=True)
class ChannelReopened(Event):
    channel: str


@dataclass(slots=True)
class RateChanged(Event):
    capacity: float
    refill: float


@dataclass(slots=True)
class FormAsked(Event):
    form: Form


@dataclass(slots=True)
class FormSettled(Event):
    """The operator answered or canceled a form (`form.state` says which)."""

    form: Form


@dataclass(slots=True)
class DecisionRecorded(Event):
    """A record was appended to the decision ledger."""

    index: int
    decision: Decision


@dataclass(slots=True)
class FloorChanged(Event):
    """A scope's floor changed hands or hands (`floor` is a snapshot of it)."""

    floor: Floor


@dataclass(slots=True)
class DeliberationChanged(Event):
    """A live deliberation moved: a request went out, a position or verdict came in, it was
    recorded or failed. `snapshot` is its whole state."""

    deliberation_id: str
    snapshot: Deliberation


@dataclass(slots=True)
class ToolCalled(Event):
    """An MCP tool call ended (in the hub's /mcp, or reported by a bridge)."""

    call: ToolCallRecord


@dataclass(slots=True)
class TasksChanged(Event):
    """A task changed with no item sent to say so (one stored blocked, or made to wait on
    more, or canceled before its worker saw it)."""

    change: str
    task_id: str


@dataclass(slots=True)
class ReservationsChanged(Event):
    """A holder's file reservations changed (reserved, released, renewed) or void ones were
    swept (`holder` None)."""

    change: str
    holder: str | None


@dataclass(slots=True)
class TeammatesChanged(Event):
    """A teammate was spawned or ended, or an agent's spawn grant was given or taken back."""

    change: str  # spawned | ended | granted | revoked
    spawner: str
    name: str | None = None  # the teammate, for spawned and ended
