"""Wire models of the HTTP API (they document it in /openapi.json, too)."""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from caucus.domain.channels import Channel
from caucus.domain.messages import Delivery, Message, Peek, SendReceipt, preview
from caucus.services.registry import PeerView


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Skill(BaseModel):
    id: str
    name: str
    description: str | None = None
    tags: list[str] | None = None

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}


class RegisterRequest(_In):
    name: str = Field(description="1-64 letters, digits, '.', '_' or '-'")
    token: str | None = Field(
        None, description="your existing token, to resume that identity (or send it as Bearer)"
    )
    skills: list[str | Skill] | None = Field(None, description="kept when omitted")
    description: str | None = Field(None, description="kept when omitted")
    protocol_version: int | None = Field(
        None, description="the protocol version you know; the text is returned if it is behind"
    )


class RegisterResponse(BaseModel):
    token: str
    name: str
    outcome: str = Field(description="created | reaffirmed | replaced | revived")
    protocol_version: int
    protocol: str | None = None
    note: str | None = None


class SendRequest(_In):
    to: str = Field(description="a peer name, 'all', or '#channel'")
    content: str
    thread: str | None = None
    reply_to: str | None = Field(None, description="id of the message this answers")
    meta: dict[str, Any] | None = None
    idempotency_key: str | None = Field(
        None, description="repeat within 24 h to get the first result back"
    )


class SendResponse(BaseModel):
    message_id: str
    seq: int
    delivered_to: list[str]
    missed: list[str] = Field(description="recipients who are reaped; their copy waits for them")

    @staticmethod
    def dump(receipt: SendReceipt) -> dict[str, Any]:
        return {
            "message_id": receipt.message_id,
            "seq": receipt.seq,
            "delivered_to": receipt.delivered_to,
            "missed": receipt.missed,
        }


class MessageRecord(BaseModel):
    """A message as the hub stores it (what every message shape below shares)."""

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


class MessageOut(MessageRecord):
    redelivered: bool = False
    delivery_count: int = 1

    @staticmethod
    def dump(message: Message, delivery_count: int = 1) -> dict[str, Any]:
        out = message.record()
        out["redelivered"] = delivery_count > 1
        out["delivery_count"] = delivery_count
        return out

    @staticmethod
    def from_delivery(d: Delivery) -> dict[str, Any]:
        return MessageOut.dump(d.message, d.delivery_count)


class ReceiveResponse(BaseModel):
    messages: list[MessageOut]
    acked: int = Field(description="deliveries acknowledged by this call's `ack`")
    superseded: bool = Field(
        False, description="a newer receive for this identity took over; this one got nothing"
    )


class AckRequest(_In):
    seqs: list[int] | None = None
    through: int | None = Field(
        None, description="acknowledge the batch holding this seq, up to and including it"
    )


class AckResponse(BaseModel):
    acked: int


class LastMessage(BaseModel):
    seq: int
    sender: str
    to: str
    preview: str
    truncated: bool
    chars: int


class PeekResponse(BaseModel):
    pending: int
    last: LastMessage | None

    @staticmethod
    def dump(peek: Peek) -> dict[str, Any]:
        last = None
        if peek.last is not None:
            text, cut = preview(peek.last.content)
            last = {
                "seq": peek.last.seq,
                "sender": peek.last.sender,
                "to": peek.last.to,
                "preview": text,
                "truncated": cut,
                "chars": len(peek.last.content),
            }
        return {"pending": peek.pending, "last": last}


class PeerOut(BaseModel):
    name: str
    state: str = Field(description="online | quiet | stale | reaped")
    status: str
    status_age: float | None
    skills: list[Skill]
    description: str
    last_seen_age: float
    listening: bool
    paused: bool = Field(description="the operator paused delivery of chatter to this peer")
    uptime: float = Field(description="seconds since the identity registered")

    @staticmethod
    def dump(view: PeerView) -> dict[str, Any]:
        return {
            "name": view.name,
            "state": view.state.value,
            "status": view.status,
            "status_age": round(view.status_age, 3) if view.status_age is not None else None,
            "skills": view.skills,
            "description": view.description,
            "last_seen_age": round(view.last_seen_age, 3),
            "listening": view.listening,
            "paused": view.paused,
            "uptime": round(view.uptime, 3),
        }


class PeersResponse(BaseModel):
    peers: list[PeerOut]


class StatusRequest(_In):
    status: str = Field(description="one line, at most 280 characters")


class StatusResponse(BaseModel):
    name: str
    status: str


class LeaveResponse(BaseModel):
    name: str
    left: bool


class ChannelRequest(_In):
    channel: str = Field(description="'#name' (the '#' may be omitted)")


class TopicRequest(_In):
    channel: str
    topic: str = Field(description="one line, at most 280 characters")


class ChannelOut(BaseModel):
    name: str
    topic: str
    topic_by: str | None
    members: list[str]
    created_at: float

    @staticmethod
    def dump(channel: Channel) -> dict[str, Any]:
        return {
            "name": channel.name,
            "topic": channel.topic,
            "topic_by": channel.topic_by,
            "members": channel.members,
            "created_at": channel.created_at,
        }


class JoinResponse(ChannelOut):
    joined: bool = Field(description="false if you were already a member")


class LeaveChannelResponse(BaseModel):
    channel: str
    left: bool


class ChannelsResponse(BaseModel):
    channels: list[ChannelOut]


class ProtocolResponse(BaseModel):
    version: int
    text: str
    sections: list[str]
    section: str | None = None


class HealthResponse(BaseModel):
    ok: bool
    version: str
    uptime: float


class ErrorBody(BaseModel):
    error: str = Field(description="a stable machine-readable code")
    detail: str = Field(description="what went wrong and what to do")


class OperatorSayRequest(_In):
    to: str = Field(description="a peer name, 'all', or '#channel'")
    content: str
    thread: str | None = None
    meta: dict[str, Any] | None = None


class AnnounceRequest(_In):
    content: str
    subject: str | None = None


class ReasonRequest(_In):
    reason: str | None = Field(None, description="told to the peers, at most 500 characters")


class RateRequest(_In):
    capacity: float = Field(description="sends an agent may make at once")
    refill: float = Field(description="sends per second added back to each agent's budget")


class RoomStateResponse(BaseModel):
    mode: str = Field(description="open | paused | stopped")
    rate: dict[str, float]


class ClosedChannelResponse(BaseModel):
    channel: str
    members: list[str] = Field(description="who was in it")


class TaskRequest(_In):
    to: str = Field(description="the worker: one peer, by name")
    payload: str = Field(description="what to do")
    subject: str | None = Field(None, description="a short title, at most 120 characters")
    thread: str | None = Field(None, description="defaults to the task id")


class TaskResultRequest(_In):
    result: str = Field(description="the worker: the result; the sender: the answer it was asked")


class TaskErrorRequest(_In):
    error: str


class TaskQuestionRequest(_In):
    question: str


class TaskEventOut(BaseModel):
    ts: float
    state: str
    actor: str
    detail: str | None


class TaskOut(BaseModel):
    task_id: str
    sender: str
    worker: str
    subject: str | None
    payload: str
    thread: str
    state: str = Field(
        description="pending | in_progress | input_required | completed | failed | canceled | "
        "expired"
    )
    a2a_state: str = Field(description="the A2A task state this corresponds to")
    created_at: float
    updated_at: float
    expires_at: float
    result: str | None
    error: str | None
    question: str | None
    answer: str | None
    history: list[TaskEventOut]


class TasksResponse(BaseModel):
    tasks: list[TaskOut]


class AgentAnnounceRequest(_In):
    payload: str = Field(description="the news, at most 4 KB")
    subject: str | None = Field(None, description="at most 120 characters")


class OfferRequest(_In):
    payload: str = Field(description="the work, at most 4 KB (it is announced)")
    subject: str | None = Field(None, description="at most 120 characters")
    required_skills: list[str | Skill] | None = None
    ttl_seconds: float | None = Field(None, description="60 s to 72 h; default 24 h")


class ClaimRequest(_In):
    note: str | None = Field(None, description="why you, in at most 500 characters")


class ResolveRequest(_In):
    select: str | None = Field(None, description="the claimant who gets the work as a task")
    withdraw: bool = Field(False, description="take the offer back instead")


class ClaimOut(BaseModel):
    claimant: str
    note: str | None
    ts: float
    state: str = Field(description="pending | selected | rejected | withdrawn")


class OfferOut(BaseModel):
    offer_id: str
    poster: str
    subject: str | None
    payload: str
    required_skills: list[Skill]
    state: str = Field(description="open | assigned | completed | withdrawn | expired")
    created_at: float
    updated_at: float
    expires_at: float
    winner: str | None
    task_id: str | None
    claims: list[ClaimOut]


class OffersResponse(BaseModel):
    offers: list[OfferOut]


class FloorRequest(_In):
    action: str = Field(description="take | pass | drop | raise | lower | status")
    scope: str = Field(description="'all' or '#channel'")
    reason: str | None = Field(None, description="why you want the floor")


class FloorOut(BaseModel):
    scope: str
    holder: str | None
    since: float | None
    reason: str | None
    hands: list[str] = Field(description="raised hands, first come first served")


class FloorsResponse(BaseModel):
    floors: list[FloorOut]


class FormFieldIn(_In):
    key: str = Field(description="1-40 letters, digits, '_' or '-'; unique in the form")
    label: str | None = Field(None, description="what the operator reads; defaults to the key")
    type: str = Field(description="radio | checkbox | text | textarea")
    options: list[str] | None = Field(
        None, description="radio and checkbox only: 1-20 choices of at most 100 characters"
    )
    required: bool = False
    allow_other: bool = Field(False, description="choice fields: accept an answer not listed")


class AskRequest(_In):
    title: str = Field(description="the question, at most 200 characters")
    fields: list[FormFieldIn] = Field(description="1-20 fields")
    to: str = Field("all", description="who gets the answer: 'all' or a #channel you are in")


class AnswerRequest(_In):
    answers: dict[str, str | list[str] | None] = Field(
        description="field key to answer: a string (radio, text, textarea) or a list of "
        "strings (checkbox)"
    )


class FormFieldOut(BaseModel):
    key: str
    label: str
    type: str
    options: list[str]
    required: bool
    allow_other: bool


class FormOut(BaseModel):
    form_id: str
    asker: str
    to: str = Field(description="the audience: 'all' or a #channel")
    title: str
    fields: list[FormFieldOut]
    state: str = Field(description="pending | answered | canceled")
    created_at: float
    updated_at: float
    answer: dict[str, str | list[str]] | None
    reason: str | None = Field(description="why the operator canceled it")
    decision_hash: str | None = Field(description="the ledger record of the answer, once written")


class FormsResponse(BaseModel):
    forms: list[FormOut]


class DecisionsResponse(BaseModel):
    decisions: list[dict[str, Any]] = Field(
        description="ledger records (caucus decision record format), newest first"
    )


class LedgerBreak(BaseModel):
    index: int
    reason: str


class LedgerStatusResponse(BaseModel):
    path: str
    records: int = Field(description="records verified (before the break, if there is one)")
    intact: bool
    anchored: bool = Field(description="a head checkpoint matches (tail truncation is caught)")
    head_hash: str
    broken: LedgerBreak | None = None
    unrecorded_error: str | None = Field(
        description="why the last answers could not be recorded, if they could not"
    )


class SessionResponse(BaseModel):
    role: str = Field(description="operator | observer")
    version: str


class RoutedMessageOut(MessageRecord):
    delivered_to: list[str]


class HistoryResponse(BaseModel):
    messages: list[RoutedMessageOut] = Field(description="oldest first")
    more: bool = Field(description="older messages matching the same filters exist")
