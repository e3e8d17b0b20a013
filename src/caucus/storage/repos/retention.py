"""What retention may drop, in bounded batches (see the statements in queries.sql for what
counts as finished). Peers are kept: their ids are referenced by what remains."""

from __future__ import annotations

from caucus.domain.retention import PurgeCounts
from caucus.storage.engine import Tx

_BIG = 1 << 62


class Retention:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def _ids(self, query: str, before: float, limit: int) -> list[str]:
        return [r["id"] for r in self._tx.all(query, {"before": before, "limit": limit})]

    def purge(self, before: float, limit: int, *, dry_run: bool = False) -> PurgeCounts:
        """Drop up to `limit` of each kind of finished item older than `before`; a dry run
        counts them all and drops nothing."""
        cap = _BIG if dry_run else limit
        messages = self._tx.all("purgeable_messages", {"before": before, "limit": cap})
        tasks = self._ids("purgeable_tasks", before, cap)
        offers = self._ids("purgeable_offers", before, cap)
        forms = self._ids("purgeable_forms", before, cap)
        counts = PurgeCounts(
            messages=len(messages),
            tasks=len(tasks),
            offers=len(offers),
            forms=len(forms),
            newest_ts=max((r["ts"] for r in messages), default=None),
            newest_seq=max((r["seq"] for r in messages), default=None),
        )
        if dry_run:
            return counts
        seqs = [{"id": r["seq"]} for r in messages]
        for query, ids in (
            ("message_delete", seqs),
            ("announcement_delete", seqs),
            ("task_events_delete", [{"id": i} for i in tasks]),
            ("task_delete", [{"id": i} for i in tasks]),
            ("offer_claims_delete", [{"id": i} for i in offers]),
            ("offer_delete", [{"id": i} for i in offers]),
            ("form_delete", [{"id": i} for i in forms]),
        ):
            if ids:
                self._tx.many(query, ids)
        return counts

    def oldest_ts(self) -> float | None:
        """When the oldest message retention may drop was sent."""
        row = self._tx.one("purgeable_messages", {"before": _BIG, "limit": 1})
        return float(row["ts"]) if row is not None else None
