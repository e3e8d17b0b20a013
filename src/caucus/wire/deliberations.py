"""Deliberations on the wire: a live panel's state, its positions round by round, the verdict
and the ledger record it became."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol

from pydantic import Field

from caucus.wire.fields import Wire, closed


class Position(Protocol):
    """A panelist's position as the deliberation engine holds it (read, never imported: the
    wire's clients never load the engine)."""

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


class DeliberationState(StrEnum):
    DELIBERATING = "deliberating"  # the panel is answering a round
    DECIDING = "deciding"  # the chair is weighing the final positions
    DECIDED = "decided"  # recorded on the ledger and announced
    FAILED = "failed"  # nobody answered, the chair declined, or the record was refused


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


class VerdictInfo(Wire):
    stance: str
    decision: str
    confidence: float = Field(ge=0, le=1)


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


class DeliberationList(Wire):
    deliberations: list[DeliberationInfo]


class Convened(Wire):
    """What convening answers (the deliberation then runs; its record is announced)."""

    deliberation_id: str
    panel: list[str]
    chair: str

    @classmethod
    def of(cls, d: DeliberationInfo) -> Convened:
        return cls.model_construct(
            deliberation_id=d.deliberation_id, panel=[p.name for p in d.panel], chair=d.chair
        )
