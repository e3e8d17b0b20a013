"""Job-board operations of the SQLite store: offers, claims, resolution, expiry."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable
from typing import Any

from caucus.domain.caps import check_open_offers
from caucus.domain.messages import AppendOutcome, NewMessage
from caucus.domain.names import Target, TargetKind
from caucus.domain.offers import (
    Claim,
    Offer,
    Resolution,
    check_claimant,
    check_open,
    check_resolver,
    check_selectable,
    pending_claimants,
)
from caucus.errors import Conflict, Hint, NotFound
from caucus.storage.sqlite_base import stored_json
from caucus.storage.sqlite_tasks import TaskOps

_OFFER_COLS = (
    "id, poster, subject, payload, required_skills, state, created_at, updated_at, expires_at,"
    " winner, task_id, poster_id"
)


def _offer(conn: sqlite3.Connection, row: tuple[Any, ...]) -> Offer:
    offer = Offer(
        row[0],
        row[1],
        row[2],
        row[3],
        stored_json(row[4]),
        row[5],
        row[6],
        row[7],
        row[8],
        row[9],
        row[10],
    )
    offer.claims = [
        Claim(*r)
        for r in conn.execute(
            "SELECT claimant, note, ts, state FROM offer_claims WHERE offer_id = ? ORDER BY ts",
            (offer.id,),
        )
    ]
    return offer


def _to(name: str) -> Target:
    return Target(TargetKind.PEER, name)


class OfferOps(TaskOps):
    async def create_offer(
        self,
        *,
        offer_id: str,
        poster_id: int,
        announcement: NewMessage,
        subject: str | None,
        payload: str,
        required_skills: list[dict[str, Any]],
        now: float,
        expires_at: float,
        max_open: int,
        min_interval: float,
        hourly: int,
    ) -> tuple[Offer, AppendOutcome]:
        """Announce and open an offer, or neither: the announcement caps and the open-offer cap
        are checked before anything is stored."""

        def op(conn: sqlite3.Connection) -> tuple[Offer, AppendOutcome]:
            (open_now,) = conn.execute(
                "SELECT COUNT(*) FROM offers WHERE poster_id = ? AND state IN ('open', 'assigned')"
                " AND expires_at >= ?",
                (poster_id, now),
            ).fetchone()
            check_open_offers(open_now, max_open)
            outcome = self._announce(conn, announcement, min_interval, hourly)
            conn.execute(
                "INSERT INTO offers (id, poster_id, poster, subject, payload, required_skills,"
                " state, created_at, updated_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, 'open',"
                " ?, ?, ?)",
                (
                    offer_id,
                    poster_id,
                    announcement.sender,
                    subject,
                    payload,
                    json.dumps(required_skills),
                    now,
                    now,
                    expires_at,
                ),
            )
            return self._offer(conn, offer_id), outcome

        return await self._write(op)

    async def claim_offer(
        self,
        offer_id: str,
        *,
        claimant_id: int,
        claimant: str,
        note: str | None,
        now: float,
        notice: Callable[[Offer], NewMessage],
    ) -> tuple[Offer, AppendOutcome | None]:
        def op(conn: sqlite3.Connection) -> tuple[Offer, AppendOutcome | None]:
            offer = self._open_offer(conn, offer_id, now)
            check_claimant(offer, self._poster_id(conn, offer_id), claimant_id)
            cur = conn.execute(
                "INSERT INTO offer_claims (offer_id, claimant_id, claimant, note, ts, state)"
                " VALUES (?, ?, ?, ?, ?, 'pending') ON CONFLICT (offer_id, claimant_id)"
                " DO UPDATE SET state = 'pending', note = excluded.note, ts = excluded.ts"
                " WHERE offer_claims.state != 'pending'",
                (offer_id, claimant_id, claimant, note, now),
            )
            if cur.rowcount == 0:
                raise Conflict(f"you already have a pending claim on {offer_id}", offer_id=offer_id)
            offer = self._offer(conn, offer_id)
            outcome = None
            with contextlib.suppress(NotFound):  # a poster who left is told nothing
                outcome = self._append(conn, notice(offer), _to(offer.poster), 0.0)
            return offer, outcome

        return await self._write(op)

    async def resolve_offer(
        self,
        offer_id: str,
        *,
        poster_id: int,
        select: str | None,
        now: float,
        assign: Callable[[Offer, str], tuple[str, NewMessage, float]],
        notice: Callable[[Offer, str, str], NewMessage],
    ) -> Resolution:
        """Select a claimant (it gets the payload as a task) or withdraw; every other claimant
        is told. Only the poster; only an open offer."""

        def op(conn: sqlite3.Connection) -> Resolution:
            offer = self._open_offer(conn, offer_id, now)
            check_resolver(offer, self._poster_id(conn, offer_id), poster_id)
            pending = pending_claimants(offer)
            outcomes: list[AppendOutcome] = []
            if select is not None:
                check_selectable(offer, select)
                task_id, message, expires_at = assign(offer, select)
                _, outcome = self._create_task(
                    conn,
                    task_id,
                    poster_id,
                    offer.poster,
                    select,
                    offer.subject,
                    offer.payload,
                    offer.id,
                    now,
                    expires_at,
                    message,
                    offer_id=offer.id,
                )
                outcomes.append(outcome)
                conn.execute(
                    "UPDATE offers SET state = 'assigned', winner = ?, task_id = ?,"
                    " updated_at = ? WHERE id = ?",
                    (select, task_id, now, offer_id),
                )
                conn.execute(
                    "UPDATE offer_claims SET state = CASE WHEN claimant = ? THEN 'selected'"
                    " ELSE 'rejected' END WHERE offer_id = ? AND state = 'pending'",
                    (select, offer_id),
                )
                losers, outcome_kind = [c for c in pending if c != select], "not_selected"
            else:
                conn.execute(
                    "UPDATE offers SET state = 'withdrawn', updated_at = ? WHERE id = ?",
                    (now, offer_id),
                )
                conn.execute(
                    "UPDATE offer_claims SET state = 'withdrawn' WHERE offer_id = ?"
                    " AND state = 'pending'",
                    (offer_id,),
                )
                losers, outcome_kind = pending, "withdrawn"
            updated = self._offer(conn, offer_id)
            for name in losers:
                with contextlib.suppress(NotFound):
                    outcomes.append(
                        self._append(conn, notice(updated, name, outcome_kind), _to(name), 0.0)
                    )
            return Resolution(updated, outcomes)

        return await self._write(op)

    async def get_offer(self, offer_id: str) -> Offer | None:
        def op(conn: sqlite3.Connection) -> Offer | None:
            row = conn.execute(
                f"SELECT {_OFFER_COLS} FROM offers WHERE id = ?", (offer_id,)
            ).fetchone()
            return _offer(conn, row) if row else None

        return await self._read(op)

    async def list_offers(self, state: str | None, limit: int = 200) -> list[Offer]:
        def op(conn: sqlite3.Connection) -> list[Offer]:
            sql = f"SELECT {_OFFER_COLS} FROM offers"
            params: list[Any] = []
            if state is not None:
                sql += " WHERE state = ?"
                params.append(state)
            rows = conn.execute(sql + " ORDER BY created_at DESC LIMIT ?", (*params, limit))
            return [_offer(conn, r) for r in rows.fetchall()]

        return await self._read(op)

    async def expire_offers(self, now: float) -> int:
        def op(conn: sqlite3.Connection) -> int:
            return conn.execute(
                "UPDATE offers SET state = 'expired', updated_at = ?"
                " WHERE state = 'open' AND expires_at < ?",
                (now, now),
            ).rowcount

        return await self._write(op)

    # --- helpers (writer) ----------------------------------------------------------------------
    def _offer(self, conn: sqlite3.Connection, offer_id: str) -> Offer:
        row = conn.execute(f"SELECT {_OFFER_COLS} FROM offers WHERE id = ?", (offer_id,)).fetchone()
        return _offer(conn, row)

    def _open_offer(self, conn: sqlite3.Connection, offer_id: str, now: float) -> Offer:
        row = conn.execute(f"SELECT {_OFFER_COLS} FROM offers WHERE id = ?", (offer_id,)).fetchone()
        if row is None:
            raise NotFound(f"no offer {offer_id!r}", hint=Hint.LIST_OFFERS, offer_id=offer_id)
        offer = _offer(conn, row)
        check_open(offer, now)
        return offer

    @staticmethod
    def _poster_id(conn: sqlite3.Connection, offer_id: str) -> int:
        value: int = conn.execute(
            "SELECT poster_id FROM offers WHERE id = ?", (offer_id,)
        ).fetchone()[0]
        return value
