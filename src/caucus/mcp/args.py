"""The arguments of every tool, written for the model that fills them in.

Every argument has a description; closed sets are enums. `{...}` in a description is filled
from the hub's `Limits` when the catalog is listed, so the numbers a model reads are the ones
this hub enforces.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from caucus.domain.dependencies import OnFailure
from caucus.domain.floors import FloorAction
from caucus.domain.forms import FieldType
from caucus.domain.offers import OfferState
from caucus.domain.search import HitKind, SearchOrder
from caucus.domain.tasks import TaskState
from caucus.protocol import section_names


def _OPEN(schema: dict[str, Any]) -> None:
    """A list filter's values are checked when it is used (and named in the refusal) but not
    listed in the catalog: every model reads the catalog, few filter by state."""
    schema.clear()
    schema["type"] = "string"


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoArgs(Args):
    pass


class JoinArgs(Args):
    name: str | None = Field(None, description="default: {default_name}")
    skills: list[str] | None = None
    description: str | None = None
    handle: str | None = None
    protocol_version: int | None = Field(None, description="the one you read (0: send it)")


class PeersArgs(Args):
    name: str | None = None
    channel: str | None = None


class StatusArgs(Args):
    status: str


class SayArgs(Args):
    to: str
    content: str
    thread: str | None = None
    reply_to: str | None = Field(None, description="#22")


class ListenArgs(Args):
    timeout: float = Field(25.0, ge=0, description="seconds (25), at most {listen_seconds}")


class ConfirmArgs(Args):
    nonce: str = Field(max_length=100)


class ProtocolArgs(Args):
    section: str | None = Field(None, json_schema_extra={"enum": [*section_names()]})


class ChannelAction(StrEnum):
    JOIN = "join"
    LEAVE = "leave"
    TOPIC = "topic"
    LIST = "list"


class ChannelArgs(Args):
    action: ChannelAction
    channel: str | None = None
    topic: str | None = None
    private: bool | None = None


class AnnounceArgs(Args):
    content: str
    subject: str | None = None


class FloorArgs(Args):
    action: FloorAction
    scope: str = Field("all", description="'all' (default) or a '#channel'")
    reason: str | None = None


class TaskAction(StrEnum):
    SEND = "send"
    REPLY = "reply"
    FAIL = "fail"
    ASK = "ask"
    CANCEL = "cancel"
    STATUS = "status"
    LIST = "list"
    READY = "ready"
    DEPEND = "depend"


class TaskRole(StrEnum):
    RECEIVED = "received"
    SENT = "sent"


class TaskArgs(Args):
    action: TaskAction
    task_id: str | None = None
    to: str | None = None
    content: str | None = None
    result: str | None = None
    error: str | None = None
    question: str | None = None
    subject: str | None = None
    role: TaskRole = TaskRole.RECEIVED
    state: TaskState | None = Field(None, json_schema_extra=_OPEN)
    blocked_by: list[str] | None = Field(None, max_length=20)
    priority: int = Field(2, ge=0, le=4, description="0 most urgent, 4 least (2)")
    on_failure: OnFailure = OnFailure.CANCEL


class OfferAction(StrEnum):
    POST = "post"
    CLAIM = "claim"
    SELECT = "select"
    WITHDRAW = "withdraw"
    LIST = "list"


class OfferArgs(Args):
    action: OfferAction
    offer_id: str | None = None
    content: str | None = None
    note: str | None = None
    subject: str | None = None
    skills: list[str] | None = None
    claimant: str | None = None
    state: OfferState | None = Field(None, json_schema_extra=_OPEN)
    matching: bool = False
    blocked_by: list[str] | None = Field(None, max_length=20)
    priority: int = Field(2, ge=0, le=4, description="0 most urgent, 4 least (2)")


class ReservationAction(StrEnum):
    RESERVE = "reserve"
    RELEASE = "release"
    RENEW = "renew"
    LIST = "list"


class ReservationArgs(Args):
    action: ReservationAction
    paths: list[str] | None = Field(None, max_length=50, description="'src/a.py', 'src/**/*.py'")
    exclusive: bool = True
    ttl: float | None = Field(None, ge=60, le=86400)
    reason: str | None = None
    ids: list[str] | None = None
    holder: str | None = None


class TeammateAction(StrEnum):
    LIST = "list"
    SPAWN = "spawn"
    STOP = "stop"


class TeammateArgs(Args):
    action: TeammateAction = TeammateAction.LIST
    prompt: str | None = Field(None, description="who it is, its work, whom it reports to")
    profile: str | None = None
    tools: list[str] | None = Field(None, max_length=8)
    name: str | None = None
    spawn_id: str | None = None


class SearchAction(StrEnum):
    FIND = "find"
    SUMMARIZE = "summarize"


class SearchArgs(Args):
    action: SearchAction = SearchAction.FIND
    q: str | None = Field(None, description='words, "phrases": all match')
    sender: str | None = None
    channel: str | None = None
    kind: HitKind | None = None
    thread: str | None = None
    since: str | None = None
    until: str | None = None
    order: SearchOrder = SearchOrder.RELEVANCE
    limit: int = Field(10, ge=1, le=50)


class FormFieldArgs(Args):
    key: str
    label: str | None = None
    type: FieldType = Field(description="radio: one option; checkbox: any")
    options: list[str] | None = None
    required: bool = False
    allow_other: bool = False


class AskArgs(Args):
    title: str | None = None
    fields: list[FormFieldArgs] | None = Field(None, min_length=1, max_length=20)
    to: str = Field("all", description="who hears the answer: 'all' or your #channel")


class DecisionsArgs(Args):
    limit: int = Field(20, ge=1, le=200)


class Stance(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"
    DEFER = "defer"


class EvidenceArgs(Args):
    model_config = ConfigDict(extra="allow")
    source: str | None = None
    ref: str | None = None


class ConveneArgs(Args):
    subject: str
    panel: list[str] = Field(min_length=1, max_length=8, description="peers, or one #channel")
    chair: str = Field("operator", description="'operator' (default), 'model' or a peer")
    evidence: list[EvidenceArgs] | None = None
    rounds: int = Field(2, ge=1, le=4)
    deadline: float = Field(300, ge=5, le=3600)


class PositionArgs(Args):
    deliberation: str
    stance: Stance
    summary: str = Field(description="your argument; as the chair: the decision")
    confidence: float = Field(ge=0, le=1, description="0 to 1")
    evidence: list[str] | None = None
