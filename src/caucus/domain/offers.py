"""The job board: offers of work, the claims on them, and how each ends."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from caucus.domain.messages import AppendOutcome


class OfferState(StrEnum):
    OPEN = "open"
    ASSIGNED = "assigned"
    COMPLETED = "completed"
    WITHDRAWN = "withdrawn"
    EXPIRED = "expired"


class ClaimState(StrEnum):
    PENDING = "pending"
    SELECTED = "selected"
    REJECTED = "rejected"
    WITHDRAWN = "withdrawn"


OFFER_STATES = tuple(OfferState)


@dataclass(slots=True)
class Claim:
    claimant: str
    note: str | None
    ts: float
    state: str


@dataclass(slots=True)
class Offer:
    id: str
    poster: str
    subject: str | None
    payload: str
    required_skills: list[dict[str, Any]]
    state: str
    created_at: float
    updated_at: float
    expires_at: float
    winner: str | None
    task_id: str | None
    claims: list[Claim] = field(default_factory=list)


@dataclass(slots=True)
class Resolution:
    offer: Offer
    outcomes: list[AppendOutcome]
