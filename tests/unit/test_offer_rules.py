"""The job board's rules are domain functions, checked with no database (issue 14)."""

from __future__ import annotations

import pytest

from caucus.domain.offers import (
    Claim,
    Offer,
    check_claimant,
    check_open,
    check_resolver,
    check_selectable,
    pending_claimants,
)
from caucus.errors import Conflict, Forbidden, NotFound


def offer(
    state: str = "open", expires_at: float = 100.0, claims: list[Claim] | None = None
) -> Offer:
    return Offer(
        "o_1", "alice", None, "work", [], state, 0.0, 0.0, expires_at, None, None, claims or []
    )


def test_only_an_open_unexpired_offer_takes_claims_and_resolutions() -> None:
    check_open(offer(), now=50)
    with pytest.raises(Conflict) as expired:
        check_open(offer(), now=101)
    assert expired.value.extra["state"] == "expired"
    for state in ("assigned", "completed", "withdrawn", "expired"):
        with pytest.raises(Conflict) as refused:
            check_open(offer(state), now=50)
        assert refused.value.extra["state"] == state


def test_the_poster_never_claims_and_alone_resolves() -> None:
    check_claimant(offer(), poster_id=1, claimant_id=2)
    with pytest.raises(Forbidden):
        check_claimant(offer(), poster_id=1, claimant_id=1)
    check_resolver(offer(), poster_id=1, actor_id=1)
    with pytest.raises(Forbidden):
        check_resolver(offer(), poster_id=1, actor_id=2)


def test_only_a_pending_claimant_can_be_selected() -> None:
    claims = [
        Claim("bob", None, 1.0, "pending"),
        Claim("carol", None, 2.0, "withdrawn"),
        Claim("dave", None, 3.0, "rejected"),
    ]
    board = offer(claims=claims)
    assert pending_claimants(board) == ["bob"]
    check_selectable(board, "bob")
    for name in ("carol", "dave", "erin"):
        with pytest.raises(NotFound):
            check_selectable(board, name)


def test_an_assigned_offer_follows_its_tasks_ending() -> None:
    from caucus.domain.offers import OfferState, after_assignment
    from caucus.domain.tasks import TaskState

    for open_state in (TaskState.PENDING, TaskState.IN_PROGRESS, TaskState.INPUT_REQUIRED):
        assert after_assignment(open_state, expires_at=100, now=50) is None
    assert after_assignment(TaskState.COMPLETED, expires_at=100, now=500) is OfferState.COMPLETED
    for ended in (TaskState.FAILED, TaskState.CANCELED, TaskState.EXPIRED):
        assert after_assignment(ended, expires_at=100, now=50) is OfferState.OPEN
        assert after_assignment(ended, expires_at=100, now=101) is OfferState.EXPIRED
