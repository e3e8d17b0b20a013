"""Messages, their per-recipient deliveries, and what a send reports back.

These records are treated as immutable but not frozen: they are built several times per message
on the hot path, and a frozen dataclass's __init__ costs several times more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any

PREVIEW_CHARS = 200


class MessageKind(StrEnum):
    """Every kind of inbox item the hub sends: the one vocabulary of `Message.kind`."""

    CHAT = "chat"  # from an agent
    OPERATOR = "operator"  # the operator speaking
    ANNOUNCE = "announce"  # news to everyone (an agent's, the operator's, an offer's)
    CONTROL = "control"  # content is the action: stop, interrupt, reset
    SYSTEM = "system"  # the hub telling peers about a change (a channel closed, a floor)
    TASK = "task"  # to a task's worker: do this (again, with `answer` after an input request)
    RESULT = "result"  # to a task's sender: completed
    FAILURE = "failure"  # to a task's sender: failed or expired
    INPUT_REQUEST = "input_request"  # to a task's sender: the worker asks a question
    TASK_CANCELED = "task_canceled"  # to a task's worker: the sender canceled
    OFFER_CLAIM = "offer_claim"  # to an offer's poster: someone claims it
    OFFER_NOT_SELECTED = "offer_not_selected"  # to a claimant: another was chosen
    OFFER_WITHDRAWN = "offer_withdrawn"  # to a claimant: the poster withdrew the offer
    FORM_ANSWER = "form_answer"  # the operator answered a form
    FORM_CANCELED = "form_canceled"  # the operator canceled a form


class SystemSender(StrEnum):
    """Senders that are not peers (and so are reserved names)."""

    OPERATOR = "operator"
    HUB = "hub"


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
    reply_seq: int | None = None  # the number of the message replied to
    reply_sender: str | None = None  # and who sent it: a reply reads "re #22 from alice"
    delivered_to: list[str] | None = None  # filled where the record is read whole (transcripts)


@dataclass(slots=True)
class Delivery:
    message: Message
    delivery_count: int

    @property
    def redelivered(self) -> bool:
        return self.delivery_count > 1


@dataclass(slots=True)
class SendReceipt:
    """What a sender is told. `missed` lists recipients who are away (reaped or offline): their
    copy is held until they come back (or are forgotten)."""

    message_id: str
    seq: int
    delivered_to: list[str]
    missed: list[str]
    duplicate: bool = False

    @property
    def reached_nobody(self) -> bool:
        return not self.delivered_to


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
    reply_to: str | None = None  # as the sender gave it: an id, or a number (`#22`, `22`)
    reply_seq: int | None = None  # set by storage from the message replied to
    reply_sender: str | None = None
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
class ClaimRequest:
    """A receive's claim: acknowledge the batch that held `ack_through`, then hand out up to
    `limit` deliveries visible at `now`, hidden for `visibility` seconds; only the priority
    lane when `priority_only` (a paused recipient)."""

    peer_id: int
    now: float
    visibility: float
    limit: int
    ack_through: int | None = None
    priority_only: bool = False


@dataclass(slots=True)
class ClaimResult:
    deliveries: list[Delivery]
    acked: int
    next_visible_at: float | None  # when an in-flight delivery becomes visible again
    # With deliveries: the claim took every visible one, and `next_visible_at` is when the next
    # (these included) shows, so the receive after it may park without claiming first.
    drained: bool = False
    # The senders of the tasks this receive claimed (pending → in progress): told, so a
    # sender following its task (the A2A door's stream) sees it taken up.
    claimed_for: list[int] = field(default_factory=list)


@dataclass(slots=True)
class Peek:
    pending: int
    last: Message | None


def preview(content: str) -> tuple[str, bool]:
    if len(content) <= PREVIEW_CHARS:
        return content, False
    return content[:PREVIEW_CHARS], True


_NUMBER = re.compile(r"#?([0-9]{1,18})")


def message_number(ref: str) -> int | None:
    """The number in a reference to a message as a model writes it (`#22` or `22`); None
    for anything else (an id, `m_...`)."""
    found = _NUMBER.fullmatch(ref.strip())
    return int(found.group(1)) if found else None


_MESSAGE_ID = re.compile(r"m_[0-9a-f]{22}")


def is_message_id(ref: str) -> bool:
    """Whether `ref` is an id the hub gave a message (a thread a reply started is one)."""
    return _MESSAGE_ID.fullmatch(ref) is not None


REPLY_FORMS = "the number a message shows (#22 or 22) or its id (m_...)"
