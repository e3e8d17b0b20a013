"""File reservations (`domain.reservations`): stored as granted, read as they stand."""

from __future__ import annotations

from caucus.domain.reservations import Reservation
from caucus.storage.engine import Row, Tx


def _reservation(row: Row) -> Reservation:
    return Reservation(
        row["id"],
        row["holder"],
        row["pattern"],
        bool(row["exclusive"]),
        row["reason"],
        row["created_at"],
        row["expires_at"],
    )


class Reservations:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def insert(self, holder_id: int, r: Reservation) -> None:
        self._tx.run(
            "reservation_insert",
            {
                "id": r.id,
                "holder_id": holder_id,
                "holder": r.holder,
                "pattern": r.pattern,
                "exclusive": int(r.exclusive),
                "reason": r.reason,
                "now": r.created_at,
                "expires_at": r.expires_at,
            },
        )

    def update(self, holder_id: int, r: Reservation) -> None:
        """A holder's reservation taken again: its kind, reason and expiry as now asked."""
        self._tx.run(
            "reservation_update",
            {
                "id": r.id,
                "holder_id": holder_id,
                "exclusive": int(r.exclusive),
                "reason": r.reason,
                "expires_at": r.expires_at,
            },
        )

    def live(self, now: float) -> list[Reservation]:
        """Every reservation that stands, oldest first."""
        return [_reservation(r) for r in self._tx.all("reservations_live", {"now": now})]

    def of_holder(self, holder_id: int, now: float) -> list[Reservation]:
        rows = self._tx.all("reservations_live_of_holder", {"holder_id": holder_id, "now": now})
        return [_reservation(r) for r in rows]

    def delete(self, holder_id: int, reservation_id: str) -> bool:
        params = {"id": reservation_id, "holder_id": holder_id}
        return self._tx.run("reservation_delete", params) == 1

    def renew(self, holder_id: int, reservation_id: str, expires_at: float, now: float) -> bool:
        params = {"id": reservation_id, "holder_id": holder_id, "expires_at": expires_at}
        return self._tx.run("reservation_renew", {**params, "now": now}) == 1

    def sweep(self, now: float) -> int:
        """Delete the expired and those of holders no longer here; how many."""
        return self._tx.run("reservations_sweep", {"now": now})
