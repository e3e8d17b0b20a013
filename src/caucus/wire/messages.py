"""Messages on the wire: as stored, as delivered, as routed; what a send and a peek answer."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from caucus.domain.messages import Delivery, Message, MessageKind, Peek, SendReceipt, preview
from caucus.wire.fields import Wire, closed


class Notice(StrEnum):
    """Something a sender should know about a send that was accepted."""

    NO_RECIPIENTS = "no_recipients"  # nobody else was there to receive it


class MessageRecord(Wire):
    """A message as the hub stores it (what every view of a message shares)."""

    seq: int
    id: str
    ts: float
    sender: str
    to: str = Field(description="a peer, 'all' or '#channel'")
    kind: str = closed(MessageKind)
    content: str
    meta: dict[str, Any] | None = None
    thread: str | None = None
    reply_to: str | None = None
    reply_seq: int | None = Field(None, description="the number of the message replied to")
    reply_sender: str | None = Field(None, description="who sent the message replied to")

    @staticmethod
    def fields_of(m: Message) -> dict[str, Any]:
        return {
            "seq": m.seq,
            "id": m.id,
            "ts": m.ts,
            "sender": m.sender,
            "to": m.to,
            "kind": m.kind,
            "content": m.content,
            "meta": m.meta,
            "thread": m.thread,
            "reply_to": m.reply_to,
            "reply_seq": m.reply_seq,
            "reply_sender": m.reply_sender,
        }


class InboundMessage(MessageRecord):
    """A message as its recipient receives it."""

    redelivered: bool
    delivery_count: int

    @classmethod
    def of(cls, d: Delivery) -> InboundMessage:
        return cls.model_construct(
            **cls.fields_of(d.message),
            redelivered=d.delivery_count > 1,
            delivery_count=d.delivery_count,
        )


class RoutedMessage(MessageRecord):
    """A message as the operator, the transcript and exports see it: with its recipients."""

    delivered_to: list[str]

    @classmethod
    def of(
        cls, m: Message, delivered_to: list[str] | tuple[str, ...] | None = None
    ) -> RoutedMessage:
        recipients = delivered_to if delivered_to is not None else m.delivered_to
        return cls.model_construct(**cls.fields_of(m), delivered_to=list(recipients or []))

    def message(self) -> Message:
        """As the domain holds it (a transcript export read back: `caucus db import`)."""
        fields = self.model_dump(exclude={"to", "delivered_to"})
        return Message(**fields, to=self.to, delivered_to=list(self.delivered_to))


class SendResult(Wire):
    message_id: str
    seq: int
    delivered_to: list[str]
    missed: list[str] = Field(description="recipients who are away: their copy waits for them")
    replayed: bool = Field(False, description="a repeated idempotency key: the first result")
    notice: str | None = closed(Notice, nullable=True, default=None)

    @classmethod
    def of(cls, receipt: SendReceipt) -> SendResult:
        return cls.model_construct(
            message_id=receipt.message_id,
            seq=receipt.seq,
            delivered_to=receipt.delivered_to,
            missed=receipt.missed,
            replayed=receipt.duplicate,
            notice=Notice.NO_RECIPIENTS.value if receipt.reached_nobody else None,
        )


class Batch(Wire):
    messages: list[InboundMessage]
    acked: int = Field(description="deliveries acknowledged by this call")
    superseded: bool = Field(
        False, description="a newer receive for this identity took over; this one got nothing"
    )
    displaced_watcher: bool = Field(
        False,
        description="this receive took the place of the identity's running watcher (`caucus "
        "watch`), which ends saying DISPLACED; nothing was lost",
    )


class AckResult(Wire):
    acked: int


class LastPreview(Wire):
    seq: int
    sender: str
    to: str
    preview: str
    truncated: bool
    chars: int


class PeekResult(Wire):
    pending: int
    last: LastPreview | None

    @classmethod
    def of(cls, peek: Peek) -> PeekResult:
        last = None
        if peek.last is not None:
            m = peek.last
            text, cut = preview(m.content)
            last = LastPreview.model_construct(
                seq=m.seq,
                sender=m.sender,
                to=m.to,
                preview=text,
                truncated=cut,
                chars=len(m.content),
            )
        return cls.model_construct(pending=peek.pending, last=last)


class DroppedInfo(Wire):
    messages: int = Field(description="messages retention has dropped, in all")
    through_seq: int | None = Field(description="messages up to this seq may be gone")
    through_ts: float | None = Field(description="the newest dropped message's time")


class History(Wire):
    messages: list[RoutedMessage] = Field(description="oldest first")
    more: bool = Field(description="older messages matching the same filters exist")
    dropped: DroppedInfo | None = Field(
        None, description="what retention dropped (older history is gone), if anything"
    )
