"""Query parameters of the HTTP API's GET verbs, one model per verb that takes any (the verb
table's `query`): the routes parse them, `HubClient` names them, /openapi.json shows them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from caucus.domain.search import MAX_LIMIT, MAX_QUERY
from caucus.wire.fields import MAX_INT


class PingQuery(BaseModel):
    peer: str = Field(description="the name of the peer to ask about")


class ReceiveQuery(BaseModel):
    timeout: float = Field(25, ge=0, le=25, description="seconds to wait")
    ack: int | None = Field(None, description="acknowledge the previous batch through this seq")
    limit: int | None = Field(None, ge=1, le=100, description="at most this many (1-100)")


class PeekQuery(BaseModel):
    after: int | None = Field(
        None, ge=0, description="with wait: return once a pending message is newer than this seq"
    )
    wait: float = Field(
        0.0, ge=0, le=3600, description="seconds to wait for that (capped as a receive's wait)"
    )


class WatchQuery(BaseModel):
    timeout: float = Field(25.0, ge=0, le=3600, description="seconds to wait")


class DecisionsQuery(BaseModel):
    limit: int = Field(20, ge=1, le=200, description="how many, newest first (1-200)")


class TasksQuery(BaseModel):
    role: str = Field("received", description="sent | received")
    status: str | None = Field(None, description="a task state")


class ReadyQuery(BaseModel):
    limit: int = Field(50, ge=1, le=200, description="1-200")


class OffersQuery(BaseModel):
    status: str | None = Field(None, description="open, assigned, completed, ...")
    matching: bool = Field(False, description="only offers whose required skills you have")


class ReservationsQuery(BaseModel):
    holder: str | None = Field(None, description="only this agent's")


class SearchQuery(BaseModel):
    q: str = Field(
        min_length=1,
        max_length=MAX_QUERY,
        description='words and "quoted phrases", every one of which a hit holds',
    )
    sender: str | None = Field(None, max_length=64, description="sent by this name")
    channel: str | None = Field(
        None, max_length=64, description="sent to this #channel (or all: broadcasts)"
    )
    since: str | None = Field(None, description="at or after: epoch seconds or ISO 8601")
    until: str | None = Field(None, description="before: epoch seconds or ISO 8601")
    kind: str | None = Field(None, description="message, announcement, task or decision")
    thread: str | None = Field(None, max_length=128, description="in this thread")
    order: str = Field("relevance", description="relevance (best first) or recent (newest first)")
    limit: int = Field(20, ge=1, le=MAX_LIMIT, description=f"1-{MAX_LIMIT}")


class SummaryQuery(BaseModel):
    model: bool = Field(
        True, description="also ask the hub's chair model, when it has one (default true)"
    )


class ProtocolQuery(BaseModel):
    section: str | None = Field(None, description="a section name")


class ExportQuery(BaseModel):
    format: Literal["json", "markdown", "text"] = "json"
    since: str | None = Field(None, description="epoch seconds or ISO 8601")
    until: str | None = Field(None, description="epoch seconds or ISO 8601")


# --- the operator's and the observer's -------------------------------------------------------
class ActivityQuery(BaseModel):
    limit: int = Field(200, ge=1, le=2000)
    caller: str | None = Field(None, max_length=64)
    tool: str | None = Field(None, max_length=64)
    errors: bool = False


class OutputQuery(BaseModel):
    after: int = Field(0, ge=0, le=MAX_INT)


class FormsQuery(BaseModel):
    state: str = Field("pending", description="pending | answered | canceled | all")


class HistoryQuery(BaseModel):
    before: int | None = Field(None, ge=0, le=MAX_INT, description="only messages with a lower seq")
    limit: int = Field(200, ge=1, le=500, description="1-500")
    peer: str | None = Field(None, description="from, to or delivered to this peer")
    channel: str | None = Field(None, description="sent to this #channel")
    kind: str | None = Field(None, description="chat, operator, system, task, ...")
    q: str | None = Field(None, description="words the content holds, as search finds them")


class AllTasksQuery(BaseModel):
    status: str | None = Field(None, description="a task state")
    limit: int = Field(200, ge=1, le=500, description="1-500")


class AllOffersQuery(BaseModel):
    status: str | None = Field(None, description="open | assigned | ...")
