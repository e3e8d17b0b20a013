"""Messages, their per-recipient deliveries, and what a send reports back.

These records are treated as immutable but not frozen: they are built several times per message
on the hot path, and a frozen dataclass's __init__ costs several times more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any

PREVIEW_CHARS = 200


class MessageKind(StrEnum):
    CHAT = "chat"  # from an agent
    OPERATOR = "operator"  # the operator speaking
    ANNOUNCE = "announce"  # operator news to everyone
    CONTROL = "control"  # content is the action: stop, interrupt, reset
    SYSTEM = "system"  # the hub telling peers about a change (a channel closed)


class ControlAction(StrEnum):
    STOP = "stop"
    INTERRUPT = "interrupt"
    RESET = "reset"


class Lane(IntEnum):
    """Deliveries in the priority lane pierce a pause; both lanes are ordered by seq."""

    PRIORITY = 0
    CHATTER = 1


@dataclass(slots=True)
class Message:
    seq: int
    id: str
    ts: float
    sender: str
    to: str
    kind: str
    content: str
    meta: dict[str, Any] | None = None
    thread: str | None = None
    reply_to: str | None = None
    delivered_to: list[str] | None = None  # filled where the record is read whole (transcripts)

    def record(self, *, with_recipients: bool = False) -> dict[str, Any]:
        """The message as plain data: what the API, the feed and the transcript show."""
        out: dict[str, Any] = {
            "seq": self.seq,
            "id": self.id,
            "ts": self.ts,
            "sender": self.sender,
            "to": self.to,
            "kind": self.kind,
            "content": self.content,
            "meta": self.meta,
            "thread": self.thread,
            "reply_to": self.reply_to,
        }
        if with_recipients:
            out["delivered_to"] = list(self.delivered_to or [])
        return out


@dataclass(slots=True)
class Delivery:
    message: Message
    delivery_count: int

    @property
    def redelivered(self) -> bool:
        return self.delivery_count > 1


@dataclass(slots=True)
class SendReceipt:
    """What a sender is told. `missed` lists recipients who are reaped: their copy is held until
    they come back (or are forgotten)."""

    message_id: str
    seq: int
    delivered_to: list[str]
    missed: list[str]
    duplicate: bool = False


@dataclass(slots=True)
class NewMessage:
    """A message the delivery service asks storage to append and fan out."""

    id: str
    ts: float
    sender_id: int | None
    sender: str
    to: str
    kind: str
    content: str
    meta: dict[str, Any] | None = None
    thread: str | None = None
    reply_to: str | None = None
    idempotency_key: str | None = None
    lane: Lane = Lane.CHATTER
    ephemeral: bool = False  # dropped rather than replayed when the recipient reconnects
    joins_channel: bool = True  # an agent's send to a #channel creates it and joins the sender


@dataclass(slots=True)
class Recipient:
    peer_id: int
    name: str
    reaped: bool


@dataclass(slots=True)
class AppendOutcome:
    receipt: SendReceipt
    message: Message
    recipients: list[Recipient] = field(default_factory=list)
    joined_channel: bool = False  # the sender was added to the target channel by this send


@dataclass(slots=True)
class ClaimResult:
    deliveries: list[Delivery]
    acked: int
    next_visible_at: float | None  # when an in-flight delivery becomes visible again


@dataclass(slots=True)
class Peek:
    pending: int
    last: Message | None


def preview(content: str) -> tuple[str, bool]:
    if len(content) <= PREVIEW_CHARS:
        return content, False
    return content[:PREVIEW_CHARS], True
