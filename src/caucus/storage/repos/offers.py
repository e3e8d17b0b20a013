"""Offers on the job board and the claims on them. The board's rules are the domain's
(`domain.offers`); this stores what was decided."""

from __future__ import annotations

import json
from typing import Any

from caucus.domain.offers import Claim, Offer, OfferState
from caucus.storage.engine import Row, Tx
from caucus.storage.rows import stored_json


class Offers:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def _offer(self, row: Row) -> Offer:
        offer = Offer(
            row["id"],
            row["poster"],
            row["subject"],
            row["payload"],
            stored_json(row["required_skills"]),
            row["state"],
            row["created_at"],
            row["updated_at"],
            row["expires_at"],
            row["winner"],
            row["task_id"],
            priority=row["priority"],
            blocked=bool(row["blocked"]),
            on_failure=row["on_failure"],
        )
        offer.blocked_by = [
            r["id"] for r in self._tx.all("offer_dependencies_of", {"offer_id": offer.id})
        ]
        offer.claims = [
            Claim(r["claimant"], r["note"], r["ts"], r["state"])
            for r in self._tx.all("claims_of_offer", {"offer_id": offer.id})
        ]
        return offer

    def insert(
        self,
        *,
        offer_id: str,
        poster_id: int,
        poster: str,
        subject: str | None,
        payload: str,
        required_skills: list[dict[str, Any]],
        now: float,
        expires_at: float,
        priority: int = 2,
        blocked: bool = False,
        on_failure: str = "cancel",
    ) -> None:
        self._tx.run(
            "offer_insert",
            {
                "id": offer_id,
                "poster_id": poster_id,
                "poster": poster,
                "subject": subject,
                "payload": payload,
                "required_skills": json.dumps(required_skills),
                "now": now,
                "expires_at": expires_at,
                "priority": priority,
                "blocked": int(blocked),
                "on_failure": on_failure,
            },
        )

    def get(self, offer_id: str) -> Offer | None:
        row = self._tx.one("offer_by_id", {"id": offer_id})
        return self._offer(row) if row is not None else None

    def with_poster(self, offer_id: str) -> tuple[Offer, int] | None:
        """An offer and its poster's id, which the wire never shows; locked for this unit
        where the backend has row locks."""
        row = self._tx.one("offer_for_update", {"id": offer_id})
        return (self._offer(row), row["poster_id"]) if row is not None else None

    def open_count(self, poster_id: int, now: float) -> int:
        """A poster's offers open or assigned and not past their time to live."""
        return int(self._tx.value("offers_open_of_poster", {"poster_id": poster_id, "now": now}))

    def in_state(self, state: str | None, limit: int = 200) -> list[Offer]:
        rows = self._tx.all("offers_in_state", {"state": state, "limit": limit})
        return [self._offer(r) for r in rows]

    def assigned_from(self, task_id: str) -> Offer | None:
        """The assigned offer a task came from."""
        row = self._tx.one("offer_assigned_from_task", {"task_id": task_id})
        return self._offer(row) if row is not None else None

    def assign(self, offer_id: str, winner: str, task_id: str, now: float) -> bool:
        params = {"id": offer_id, "winner": winner, "task_id": task_id, "now": now}
        if self._tx.run("offer_assign", params) != 1:
            return False
        self._tx.run("claims_select", {"offer_id": offer_id, "winner": winner})
        return True

    def withdraw(self, offer_id: str, now: float) -> None:
        self.set_state(offer_id, OfferState.WITHDRAWN, now)
        self._tx.run("claims_withdraw", {"offer_id": offer_id})

    def set_state(self, offer_id: str, state: OfferState, now: float) -> None:
        self._tx.run("offer_set_state", {"id": offer_id, "state": state.value, "now": now})

    def reopen(self, offer: Offer, state: OfferState, now: float) -> None:
        """The assignment ended without a result: `state` (open or expired) with no winner,
        and the former winner's claim rejected."""
        self._tx.run("offer_reopen", {"id": offer.id, "state": state.value, "now": now})
        self._tx.run("claim_reject", {"offer_id": offer.id, "claimant": offer.winner})

    def expire(self, now: float) -> int:
        """Open offers past their time to live."""
        return self._tx.run("offers_expire", {"now": now})

    def add_claim(
        self, offer_id: str, claimant_id: int, claimant: str, note: str | None, ts: float
    ) -> bool:
        """A pending claim; False if the claimant already has one pending."""
        params = {
            "offer_id": offer_id,
            "claimant_id": claimant_id,
            "claimant": claimant,
            "note": note,
            "ts": ts,
        }
        return self._tx.run("claim_upsert", params) == 1
