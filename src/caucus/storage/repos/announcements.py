"""Announcements: messages to everyone that a newcomer also gets, capped per sender."""

from __future__ import annotations

from caucus.domain.caps import HOUR
from caucus.storage.engine import Tx


class Announcements:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def recent(self, sender_id: int, now: float) -> tuple[float | None, int]:
        """(when the sender last announced, how many times) in the hour before `now`."""
        row = self._tx.one("announcements_recent", {"sender_id": sender_id, "since": now - HOUR})
        assert row is not None
        return row["last"], int(row["count"])

    def record(self, seq: int, sender_id: int | None, sender: str, ts: float) -> None:
        self._tx.run(
            "announcement_insert", {"seq": seq, "sender_id": sender_id, "sender": sender, "ts": ts}
        )
