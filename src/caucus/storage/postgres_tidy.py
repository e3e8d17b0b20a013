"""Keeping the deliveries table small on PostgreSQL: the hub vacuums it as it churns.

Every message a hub relays inserts a delivery, updates it when it is handed out and deletes it
when it is acknowledged: two dead row versions per message, at thousands of messages a second.
Autovacuum visits a database once a minute (`autovacuum_naptime`, a server-wide setting a hub
cannot count on changing), so in between the table and its indexes fill with dead versions that
every claim's index scans step over: measured with `benchmarks/scaleout.py`'s alternated reps,
one process fell from 5,172 to 3,572 msgs/s within 40 seconds, the table 85 live rows in 8.6 MB.

So each process vacuums the table itself, on the hub's maintenance tick, once it has written
enough since the last time, and never when idle. A lazy `VACUUM` takes a lock that ordinary
reads and writes do not wait on; `SKIP_LOCKED` lets a process skip a turn another process is
already taking. The hub's role must own the table (it made it, by migrating): otherwise
PostgreSQL only warns and skips, and the hub says so once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

CHURN = 5000  # write units since the last vacuum that call for the next


class Tidy:
    """Vacuums the deliveries table when `written()` (the writer's units so far) has grown by
    `churn` since the last time. `vacuum` runs the statement (in a worker thread: it blocks)
    and returns the server's notices."""

    def __init__(
        self, written: Callable[[], int], vacuum: Callable[[], list[str]], *, churn: int = CHURN
    ) -> None:
        self._written = written
        self._vacuum = vacuum
        self._churn = churn
        self._last = 0
        self._warned = False
        self.vacuums = 0

    async def maybe(self) -> bool:
        """Vacuum now if enough was written since the last time; whether it did."""
        written = self._written()
        if written - self._last < self._churn:
            return False
        self._last = written
        notices = await asyncio.to_thread(self._vacuum)
        self.vacuums += 1
        if notices and not self._warned:
            self._warned = True
            log.warning(
                "PostgreSQL would not let the hub vacuum its deliveries table (%s): give the "
                "hub's role ownership of the tables, or lower autovacuum_naptime on the server",
                "; ".join(notices),
            )
        return True


def vacuum_with(connection: Callable[[], Any], statement: str) -> Callable[[], list[str]]:
    """The vacuum `Tidy` runs: `statement` on an autocommit connection from `connection()` (a
    context manager), returning the warnings the server sent with it."""

    def run() -> list[str]:
        notices: list[str] = []
        with connection() as conn:

            def heard(diag: Any) -> None:
                notices.append(str(diag.message_primary))

            conn.add_notice_handler(heard)
            try:
                conn.execute(statement)
            finally:
                conn.remove_notice_handler(heard)
        return notices

    return run
