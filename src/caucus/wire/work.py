"""Work on the wire: tasks and their history, offers on the job board and their claims."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from caucus.domain.dependencies import OnFailure
from caucus.domain.offers import ClaimState, Offer, OfferState
from caucus.domain.tasks import A2AState, Task, TaskState
from caucus.wire.fields import Wire, closed
from caucus.wire.peers import Skill


class TaskEventInfo(Wire):
    ts: float
    state: str
    actor: str
    detail: str | None


class TaskInfo(Wire):
    task_id: str
    sender: str
    worker: str
    subject: str | None
    # The work, in the words every surface uses for what a party writes (ADR 0023); read
    # from a hub that still says `payload`.
    content: str = Field(validation_alias=AliasChoices("content", "payload"))
    thread: str
    state: str = closed(TaskState)
    a2a_state: str = closed(A2AState, "the A2A task state it corresponds to")
    created_at: float
    updated_at: float
    expires_at: float
    result: str | None
    error: str | None
    question: str | None
    answer: str | None
    history: list[TaskEventInfo]
    priority: int = Field(2, description="0 most urgent … 4 least")
    blocked: bool = Field(False, description="waiting on blocked_by: not sent to its worker yet")
    blocked_by: list[str] = Field(default_factory=list, description="the tasks it waits on")
    on_failure: str = closed(OnFailure, default=OnFailure.CANCEL.value)

    @classmethod
    def of(cls, t: Task) -> TaskInfo:
        return cls.model_construct(
            task_id=t.id,
            sender=t.sender,
            worker=t.worker,
            subject=t.subject,
            content=t.payload,
            thread=t.thread,
            state=t.state.value,
            a2a_state=t.state.a2a,
            created_at=t.created_at,
            updated_at=t.updated_at,
            expires_at=t.expires_at,
            result=t.result,
            error=t.error,
            question=t.question,
            answer=t.answer,
            priority=t.priority,
            blocked=t.blocked,
            blocked_by=t.blocked_by,
            on_failure=t.on_failure,
            history=[
                TaskEventInfo.model_construct(
                    ts=e.ts, state=e.state, actor=e.actor, detail=e.detail
                )
                for e in t.history
            ],
        )


class TaskList(Wire):
    tasks: list[TaskInfo]

    @classmethod
    def of(cls, tasks: list[Task]) -> TaskList:
        return cls.model_construct(tasks=[TaskInfo.of(t) for t in tasks])


class ClaimInfo(Wire):
    claimant: str
    note: str | None
    ts: float
    state: str = closed(ClaimState)


class OfferInfo(Wire):
    offer_id: str
    poster: str
    subject: str | None
    content: str = Field(validation_alias=AliasChoices("content", "payload"))
    required_skills: list[Skill]
    state: str = closed(OfferState)
    created_at: float
    updated_at: float
    expires_at: float
    winner: str | None = Field(description="the claimant who got the work")
    task_id: str | None = Field(description="the task the winner got")
    claims: list[ClaimInfo]
    priority: int = Field(2, description="0 most urgent … 4 least")
    blocked: bool = Field(False, description="waiting on blocked_by: not open to claims yet")
    blocked_by: list[str] = Field(default_factory=list, description="the tasks it waits on")
    on_failure: str = closed(OnFailure, default=OnFailure.CANCEL.value)

    @classmethod
    def of(cls, o: Offer) -> OfferInfo:
        return cls.model_construct(
            offer_id=o.id,
            poster=o.poster,
            subject=o.subject,
            content=o.payload,
            required_skills=[Skill.model_construct(**s) for s in o.required_skills],
            state=o.state,
            created_at=o.created_at,
            updated_at=o.updated_at,
            expires_at=o.expires_at,
            winner=o.winner,
            task_id=o.task_id,
            priority=o.priority,
            blocked=o.blocked,
            blocked_by=o.blocked_by,
            on_failure=o.on_failure,
            claims=[
                ClaimInfo.model_construct(claimant=c.claimant, note=c.note, ts=c.ts, state=c.state)
                for c in o.claims
            ],
        )


class OfferList(Wire):
    offers: list[OfferInfo]

    @classmethod
    def of(cls, offers: list[Offer]) -> OfferList:
        return cls.model_construct(offers=[OfferInfo.of(o) for o in offers])
