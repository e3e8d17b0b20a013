"""A live deliberation as the room sees it: one frozen snapshot per change, built by the
service and turned into wire models by the transports."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class DeliberationState(StrEnum):
    DELIBERATING = "deliberating"  # the panel is answering a round
    DECIDING = "deciding"  # the chair is weighing the final positions
    DECIDED = "decided"  # recorded on the ledger and announced
    FAILED = "failed"  # nobody answered, the chair declined, or the record was refused


@dataclass(frozen=True, slots=True)
class Stand:
    """One panelist's position in one round."""

    agent: str
    stance: str
    summary: str
    confidence: float
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Seat:
    """A panelist: the rounds it answered, whether it is absent, its open request."""

    name: str
    answered: tuple[int, ...]
    absent: bool
    task_id: str | None


@dataclass(frozen=True, slots=True)
class Ruling:
    stance: str
    decision: str
    confidence: float


@dataclass(frozen=True, slots=True)
class Deliberation:
    deliberation_id: str
    subject: str
    convener: str
    chair: str  # operator | model | a peer's name
    state: DeliberationState
    round: int
    max_rounds: int
    deadline_seconds: float
    panel: tuple[Seat, ...]
    rounds: tuple[tuple[Stand, ...], ...]  # oldest first; the round under way last
    verdict: Ruling | None
    dissent: tuple[str, ...]  # panelists whose final stance differs from the verdict
    record_index: int | None
    record_hash: str | None
    chair_form: str | None
    error: str | None
    created_at: float
    updated_at: float
