"""Deliberations on the wire: a live panel's state, its positions round by round, the verdict
and the ledger record it became."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import Field

from caucus.domain.deliberations import Deliberation, DeliberationState, Ruling, Seat
from caucus.wire.fields import Wire, closed

__all__ = [
    "Convened",
    "DeliberationInfo",
    "DeliberationList",
    "DeliberationState",
    "PanelistInfo",
    "PositionInfo",
    "VerdictInfo",
]


class Position(Protocol):
    """A panelist's position: the room's (`domain.deliberations.Stand`) or the deliberation
    engine's, read alike (never imported: the wire's clients never load the engine)."""

    @property
    def agent(self) -> str: ...
    @property
    def stance(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def evidence(self) -> Sequence[str]: ...


class PositionInfo(Wire):
    agent: str
    stance: str
    summary: str
    confidence: float = Field(ge=0, le=1)
    evidence: list[str] = Field(description="the evidence refs the position rests on")

    @classmethod
    def of(cls, p: Position) -> PositionInfo:
        return cls.model_construct(
            agent=p.agent,
            stance=p.stance,
            summary=p.summary,
            confidence=p.confidence,
            evidence=list(p.evidence),
        )


class PanelistInfo(Wire):
    name: str
    answered: list[int] = Field(description="the rounds this panelist answered")
    absent: bool = Field(description="missed a deadline; not asked again")
    task_id: str | None = Field(description="its open position request, if any")

    @classmethod
    def of(cls, seat: Seat) -> PanelistInfo:
        return cls.model_construct(
            name=seat.name, answered=list(seat.answered), absent=seat.absent, task_id=seat.task_id
        )


class VerdictInfo(Wire):
    stance: str
    decision: str
    confidence: float = Field(ge=0, le=1)

    @classmethod
    def of(cls, v: Ruling) -> VerdictInfo:
        return cls.model_construct(stance=v.stance, decision=v.decision, confidence=v.confidence)


class DeliberationInfo(Wire):
    deliberation_id: str
    subject: str
    convener: str
    chair: str = Field(description="'operator', 'model', or the chairing peer's name")
    state: str = closed(DeliberationState)
    round: int = Field(description="the round under way or last run (1-based)")
    max_rounds: int
    deadline_seconds: float
    panel: list[PanelistInfo]
    rounds: list[list[PositionInfo]] = Field(description="positions per round, oldest first")
    verdict: VerdictInfo | None
    dissent: list[str] = Field(description="panelists whose final stance differs")
    record_index: int | None = Field(description="its index on the ledger, once recorded")
    record_hash: str | None
    chair_form: str | None = Field(description="the form the operator answers as chair")
    error: str | None
    created_at: float
    updated_at: float

    @classmethod
    def of(cls, d: Deliberation) -> DeliberationInfo:
        return cls.model_construct(
            deliberation_id=d.deliberation_id,
            subject=d.subject,
            convener=d.convener,
            chair=d.chair,
            state=d.state.value,
            round=d.round,
            max_rounds=d.max_rounds,
            deadline_seconds=d.deadline_seconds,
            panel=[PanelistInfo.of(seat) for seat in d.panel],
            rounds=[[PositionInfo.of(p) for p in r] for r in d.rounds],
            verdict=None if d.verdict is None else VerdictInfo.of(d.verdict),
            dissent=list(d.dissent),
            record_index=d.record_index,
            record_hash=d.record_hash,
            chair_form=d.chair_form,
            error=d.error,
            created_at=d.created_at,
            updated_at=d.updated_at,
        )


class DeliberationList(Wire):
    deliberations: list[DeliberationInfo]

    @classmethod
    def of(cls, found: list[Deliberation]) -> DeliberationList:
        return cls.model_construct(deliberations=[DeliberationInfo.of(d) for d in found])


class Convened(Wire):
    """What convening answers (the deliberation then runs; its record is announced)."""

    deliberation_id: str
    panel: list[str]
    chair: str

    @classmethod
    def of(cls, d: DeliberationInfo | Deliberation) -> Convened:
        return cls.model_construct(
            deliberation_id=d.deliberation_id, panel=[p.name for p in d.panel], chair=d.chair
        )
