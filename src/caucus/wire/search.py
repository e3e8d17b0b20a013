"""Search and thread summaries on the wire."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from caucus.domain.decisions import audience_of
from caucus.domain.search import DecisionHit, HitKind, MessageHit, SearchOrder, SearchResult
from caucus.domain.threads import KeyPoint, ThreadSummary, ThreadTask
from caucus.wire.fields import Wire, closed


class SearchHit(Wire):
    """A message that matched, with the words found between ** in its snippet."""

    kind: str = closed(HitKind, "message, announcement or task")
    seq: int
    id: str
    ts: float
    sender: str
    to: str
    message_kind: str = Field(description="the message's own kind: chat, task, result, ...")
    thread: str | None
    task_id: str | None = Field(description="for a task's messages")
    snippet: str

    @classmethod
    def of(cls, hit: MessageHit) -> SearchHit:
        m = hit.message
        task_id = (m.meta or {}).get("task_id")
        return cls.model_construct(
            kind=hit.kind.value,
            seq=m.seq,
            id=m.id,
            ts=m.ts,
            sender=m.sender,
            to=m.to,
            message_kind=str(m.kind),
            thread=m.thread,
            task_id=task_id if isinstance(task_id, str) else None,
            snippet=hit.snippet,
        )


class DecisionSearchHit(Wire):
    """A decision on the ledger that matched."""

    hash: str
    timestamp: str
    subject: str
    decision: str
    audience: str | None = Field(description="all, a #channel, or null: the operator's")
    snippet: str

    @classmethod
    def of(cls, hit: DecisionHit) -> DecisionSearchHit:
        r: dict[str, Any] = hit.record
        return cls.model_construct(
            hash=str(r.get("hash", "")),
            timestamp=str(r.get("timestamp", "")),
            subject=str(r.get("subject", "")),
            decision=str(r.get("decision", "")),
            audience=audience_of(r),
            snippet=hit.snippet,
        )


class SearchResults(Wire):
    query: str
    order: str = closed(SearchOrder)
    hits: list[SearchHit] = Field(description="best first (or newest first, by order)")
    decisions: list[DecisionSearchHit] = Field(description="newest first")
    more: bool = Field(description="more messages match: narrow the search or raise limit")
    unindexed: int = Field(
        description="the newest messages not searched yet, while the index catches up"
    )

    @classmethod
    def of(cls, found: SearchResult) -> SearchResults:
        return cls.model_construct(
            query=found.query.text,
            order=found.order.value,
            hits=[SearchHit.of(h) for h in found.hits],
            decisions=[DecisionSearchHit.of(d) for d in found.decisions],
            more=found.more,
            unindexed=found.unindexed,
        )


class Participant(Wire):
    name: str
    messages: int


class KeyPointInfo(Wire):
    seq: int
    sender: str
    text: str

    @classmethod
    def of(cls, p: KeyPoint) -> KeyPointInfo:
        return cls.model_construct(seq=p.seq, sender=p.sender, text=p.text)


class ThreadTaskInfo(Wire):
    task_id: str
    state: str
    subject: str | None

    @classmethod
    def of(cls, t: ThreadTask) -> ThreadTaskInfo:
        return cls.model_construct(task_id=t.task_id, state=t.state, subject=t.subject)


class ThreadSummaryInfo(Wire):
    thread: str
    summary: str = Field(description="the summary to read: the model's, or the extractive one")
    method: str = Field(description="extractive, or model")
    model: str | None = Field(None, description="the chair model asked, if any")
    model_error: str | None = Field(None, description="why the model's summary is missing")
    messages: int = Field(description="messages summarized")
    truncated: bool = Field(description="the thread is longer: its newest messages were read")
    participants: list[Participant] = Field(description="who spoke, most first")
    first_ts: float
    last_ts: float
    opening_seq: int
    latest_seq: int
    key_points: list[KeyPointInfo] = Field(description="the thread's own key sentences")
    tasks: list[ThreadTaskInfo]

    @classmethod
    def of(cls, found: ThreadSummary) -> ThreadSummaryInfo:
        d = found.digest
        return cls.model_construct(
            thread=d.thread,
            summary=found.summary,
            method=found.method,
            model=found.model,
            model_error=found.model_error,
            messages=d.messages,
            truncated=d.truncated,
            participants=[Participant(name=n, messages=c) for n, c in d.participants],
            first_ts=d.first_ts,
            last_ts=d.last_ts,
            opening_seq=d.opening.seq,
            latest_seq=d.latest.seq,
            key_points=[KeyPointInfo.of(p) for p in d.key_points],
            tasks=[ThreadTaskInfo.of(t) for t in d.tasks],
        )


class SearchFound(Wire):
    """The search tool's result: a search's hits, or a thread's summary."""

    found: SearchResults | None = None
    summary: ThreadSummaryInfo | None = None
