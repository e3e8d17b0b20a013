"""The job board: offers of work, the claims on them, and how each ends."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from caucus.domain.messages import AppendOutcome
from caucus.domain.tasks import TaskState
from caucus.errors import Conflict, Forbidden, Hint, NotFound


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
    priority: int = 2  # 0 most urgent … 4 (`domain.dependencies`)
    blocked: bool = False  # waiting on tasks: not announced, not open to claims yet
    on_failure: str = "cancel"
    blocked_by: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Resolution:
    offer: Offer
    outcomes: list[AppendOutcome]


# --- the board's rules (data and checks, no database: storage applies them in its transaction)
def check_open(offer: Offer, now: float) -> None:
    """Claims and resolutions need an open offer that has not outlived its TTL."""
    if offer.blocked and offer.state == OfferState.OPEN:
        raise Conflict(
            f"offer {offer.id} waits on {', '.join(offer.blocked_by)}: it opens when they are done",
            offer_id=offer.id,
            state="blocked",
        )
    if offer.state != OfferState.OPEN or offer.expires_at < now:
        state = OfferState.EXPIRED.value if offer.state == OfferState.OPEN else offer.state
        raise Conflict(f"offer {offer.id} is {state}", offer_id=offer.id, state=state)


def check_claimant(offer: Offer, poster_id: int, claimant_id: int) -> None:
    if poster_id == claimant_id:
        raise Forbidden("you cannot claim your own offer")


def check_resolver(offer: Offer, poster_id: int, actor_id: int) -> None:
    if poster_id != actor_id:
        raise Forbidden("only the offer's poster may resolve it")


def pending_claimants(offer: Offer) -> list[str]:
    return [c.claimant for c in offer.claims if c.state == ClaimState.PENDING]


def check_selectable(offer: Offer, claimant: str) -> None:
    if claimant not in pending_claimants(offer):
        raise NotFound(
            f"{claimant!r} has no pending claim on {offer.id}",
            hint=Hint.LIST_OFFERS,
            offer_id=offer.id,
        )


def after_assignment(task_state: TaskState, expires_at: float, now: float) -> OfferState | None:
    """What an assigned offer becomes when its task moves to `task_state`: completed with it;
    open again for another claimant when it fails, is canceled or expires (expired instead,
    past the offer's own TTL); unchanged (None) while the task is open."""
    if task_state is TaskState.COMPLETED:
        return OfferState.COMPLETED
    if task_state.open:
        return None
    return OfferState.EXPIRED if expires_at < now else OfferState.OPEN
