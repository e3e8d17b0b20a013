"""The job board: offers of work, the claims on them, and how each ends."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from caucus.domain.messages import AppendOutcome

OFFER_STATES = ("open", "assigned", "completed", "withdrawn", "expired")


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

    def record(self) -> dict[str, Any]:
        return {
            "offer_id": self.id,
            "poster": self.poster,
            "subject": self.subject,
            "payload": self.payload,
            "required_skills": self.required_skills,
            "state": self.state,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "expires_at": self.expires_at,
            "winner": self.winner,
            "task_id": self.task_id,
            "claims": [
                {"claimant": c.claimant, "note": c.note, "ts": c.ts, "state": c.state}
                for c in self.claims
            ],
        }


@dataclass(slots=True)
class Resolution:
    offer: Offer
    outcomes: list[AppendOutcome]
