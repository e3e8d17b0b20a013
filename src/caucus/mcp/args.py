"""The arguments of every tool, written for the model that fills them in.

Every argument has a description; closed sets are enums. `{...}` in a description is filled
from the hub's `Limits` when the catalog is listed, so the numbers a model reads are the ones
this hub enforces.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from caucus.domain.dependencies import OnFailure
from caucus.domain.floors import FloorAction
from caucus.domain.forms import FieldType
from caucus.domain.offers import OfferState
from caucus.domain.search import HitKind, SearchOrder
from caucus.domain.tasks import TaskState
from caucus.protocol import section_names


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoArgs(Args):
    pass


class JoinArgs(Args):
    name: str | None = Field(None, description="letters, digits, . _ -; default: {default_name}")
    skills: list[str] | None = Field(None, description="what you can do")
    description: str | None = Field(None, description="a line about you")
    handle: str | None = Field(None, description="an earlier join's: resume that peer")
    protocol_version: int | None = Field(None, description="the one you read; newer is sent")
    force_protocol: bool = Field(False, description="send the protocol text anyway")


class PeersArgs(Args):
    name: str | None = Field(None, description="only this peer")
    channel: str | None = Field(None, description="only this #channel's members")


class StatusArgs(Args):
    status: str = Field(description="one line, at most {status_chars} characters")


class SayArgs(Args):
    to: str = Field(description="a peer, 'all', or '#channel' (sending joins it)")
    content: str = Field(description="at most {content_chars} characters")
    thread: str | None = Field(None, description="keeps a conversation together")
    reply_to: str | None = Field(None, description="the message you answer: #22, or its id")


class ListenArgs(Args):
    timeout: float = Field(25.0, ge=0, description="seconds to wait, at most {listen_seconds}")


class ConfirmArgs(Args):
    nonce: str = Field(description="the nonce the channel check showed you", max_length=100)


class ProtocolArgs(Args):
    section: str | None = Field(
        None, description="omitted: the core text", json_schema_extra={"enum": [*section_names()]}
    )


class ChannelAction(StrEnum):
    JOIN = "join"
    LEAVE = "leave"
    TOPIC = "topic"
    LIST = "list"


class ChannelArgs(Args):
    action: ChannelAction = Field(description="join creates it if new")
    channel: str | None = Field(None, description="'#name' (not for list)")
    topic: str | None = Field(None, description="topic: at most {topic_chars} characters")
    private: bool | None = Field(None, description="join: create it private")


class AnnounceArgs(Args):
    content: str = Field(description="at most {announce_bytes} bytes")
    subject: str | None = Field(None, description="at most {announce_subject_chars} characters")


class FloorArgs(Args):
    action: FloorAction = Field(description="pass: to the next raised hand")
    scope: str = Field("all", description="'all' or a '#channel' you are in")
    reason: str | None = Field(None, description="why you want it")


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
    action: TaskAction = Field(
        description="worker: reply (done), fail, ask, ready (what to start); sender: cancel,"
        " reply to an ask, depend"
    )
    task_id: str | None = Field(None, description="not for send, list")
    to: str | None = Field(None, description="send: the worker")
    content: str | None = Field(None, description="send: the work")
    result: str | None = Field(None, description="reply: the result, or your answer")
    error: str | None = Field(None, description="fail: why")
    question: str | None = Field(None, description="ask: your question")
    subject: str | None = Field(None, description="send: a short title")
    role: TaskRole = Field(TaskRole.RECEIVED, description="list")
    state: TaskState | None = Field(None, description="list: only these")
    blocked_by: list[str] | None = Field(
        None, max_length=20, description="send, depend: task ids to finish first"
    )
    priority: int = Field(2, ge=0, le=4, description="send: 0 most urgent")
    on_failure: OnFailure = Field(OnFailure.CANCEL, description="send: if one it waits on fails")


class OfferAction(StrEnum):
    POST = "post"
    CLAIM = "claim"
    SELECT = "select"
    WITHDRAW = "withdraw"
    LIST = "list"


class OfferArgs(Args):
    action: OfferAction = Field(description="select (poster): that claimant gets a task")
    offer_id: str | None = Field(None, description="not for post, list")
    content: str | None = Field(None, description="post: the work, at most {announce_bytes} bytes")
    note: str | None = Field(None, description="claim: why you")
    subject: str | None = Field(None, description="post: a short title")
    skills: list[str] | None = Field(None, description="post: skills a claimant needs")
    claimant: str | None = Field(None, description="select")
    state: OfferState | None = Field(None, description="list: only these")
    matching: bool = Field(False, description="list: only offers your skills fit")
    blocked_by: list[str] | None = Field(None, max_length=20, description="post: tasks first")
    priority: int = Field(2, ge=0, le=4, description="post: 0 most urgent")


class ReservationAction(StrEnum):
    RESERVE = "reserve"
    RELEASE = "release"
    RENEW = "renew"
    LIST = "list"


class ReservationArgs(Args):
    action: ReservationAction = Field(description="list works before join")
    paths: list[str] | None = Field(
        None, max_length=50, description="reserve, release: 'src/a.py', 'docs/', 'src/**/*.py'"
    )
    exclusive: bool = Field(True, description="reserve: false: shared")
    ttl: float | None = Field(None, ge=60, le=86400, description="reserve, renew: seconds")
    reason: str | None = Field(None, description="reserve: what you are doing")
    ids: list[str] | None = Field(
        None, description="release, renew: reservation ids; release with neither: all yours"
    )
    holder: str | None = Field(None, description="list: only this agent's")


class TeammateAction(StrEnum):
    LIST = "list"
    SPAWN = "spawn"
    STOP = "stop"


class TeammateArgs(Args):
    action: TeammateAction = Field(TeammateAction.LIST, description="list: what you may spawn")
    prompt: str | None = Field(None, description="spawn: who it is, what for, whom it reports to")
    profile: str | None = Field(None, description="spawn: a model profile from list")
    tools: list[str] | None = Field(None, max_length=8, description="spawn: tools from list")
    name: str | None = Field(None, description="spawn: its name (default: yours-xxxx)")
    spawn_id: str | None = Field(None, description="stop")


class SearchAction(StrEnum):
    FIND = "find"
    SUMMARIZE = "summarize"


class SearchArgs(Args):
    action: SearchAction = Field(SearchAction.FIND, description="summarize: a thread's summary")
    q: str | None = Field(None, description='find: words and "quoted phrases", all must match')
    sender: str | None = Field(None, description="find: sent by this name")
    channel: str | None = Field(None, description="find: sent to this #channel")
    kind: HitKind | None = Field(None, description="find: only this kind")
    thread: str | None = Field(None, description="find: in it; summarize: required")
    since: str | None = Field(None, description="find: epoch seconds or ISO 8601")
    until: str | None = Field(None, description="find: before this time")
    order: SearchOrder = Field(SearchOrder.RELEVANCE, description="find: recent: newest first")
    limit: int = Field(10, ge=1, le=50, description="find")


class FormFieldArgs(Args):
    key: str = Field(description="letters, digits, _ -; unique")
    label: str | None = Field(None, description="default: the key")
    type: FieldType = Field(description="radio: one option; checkbox: any")
    options: list[str] | None = Field(None, description="radio, checkbox")
    required: bool = Field(False, description="must be answered")
    allow_other: bool = Field(False, description="allow an unlisted choice")


class AskArgs(Args):
    title: str | None = Field(None, description="the question; omitted: list the waiting ones")
    fields: list[FormFieldArgs] | None = Field(
        None, min_length=1, max_length=20, description="1-20, to ask"
    )
    to: str = Field("all", description="who gets the answer: 'all' or your #channel")


class DecisionsArgs(Args):
    limit: int = Field(20, ge=1, le=200, description="how many, newest first")


class Stance(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"
    DEFER = "defer"


class EvidenceArgs(Args):
    model_config = ConfigDict(extra="allow")
    source: str | None = Field(None, description="where it comes from")
    ref: str | None = Field(None, description="a URL, path or id")


class ConveneArgs(Args):
    subject: str = Field(description="what is to be decided")
    panel: list[str] = Field(min_length=1, max_length=8, description="peers, or one #channel")
    chair: str = Field("operator", description="'operator', 'model', or a peer")
    evidence: list[EvidenceArgs] | None = Field(None, description="shown to every panelist")
    rounds: int = Field(2, ge=1, le=4, description="at most, while the panel disagrees")
    deadline: float = Field(300, ge=5, le=3600, description="seconds per answer; then absent")


class PositionArgs(Args):
    deliberation: str = Field(description="its id, from the request")
    stance: Stance = Field(description="as the chair: your decision's")
    summary: str = Field(description="your argument; as the chair: the decision")
    confidence: float = Field(ge=0, le=1, description="0 to 1")
    evidence: list[str] | None = Field(None, description="refs you rely on")
