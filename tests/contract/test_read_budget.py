"""A costly read's budget (issue 47 item 4), on each backend's engine: it runs apart from the
other reads, and is given up (`QueryTimeout`) past its time budget, waiting included.

Time is the engine's injected monotonic clock on SQLite (its progress handler looks at it), so
the verdict never depends on the machine's speed; PostgreSQL's own `statement_timeout` is
what cancels a read there, set from what is left of the budget when the read starts."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from caucus.errors import QueryTimeout
from caucus.storage.postgres_engine import PgEngine
from caucus.storage.repos import Repos
from caucus.storage.sqlite_engine import SqliteEngine
from caucus.testing.postgres import Server, fresh_database


class Steps:
    """A monotonic clock that reads 0 for its first `calm` looks, then jumps far ahead at
    every look: past that, every read is past its budget at its next look."""

    def __init__(self, calm: int) -> None:
        self.calm = calm
        self.looks = 0
        self.stopped: float | None = None
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            self.looks += 1
            if self.stopped is not None:
                return self.stopped
            return 0.0 if self.looks <= self.calm else 1e6 * (self.looks - self.calm)

    def stop(self) -> None:
        """Time stands still from now on: every read is within its budget."""
        with self._lock:
            self.stopped = 1e6 * (self.looks + 1)


def _count(r: Repos) -> Any:
    """A read of ten million steps (SQLite's virtual machine): far past a budget's look."""
    conn = r.tx._conn  # type: ignore[attr-defined]  # the test reaches past named statements
    return conn.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000000)"
        " SELECT count(*) FROM n"
    ).fetchone()[0]


async def test_a_sqlite_read_past_its_budget_is_given_up_and_the_other_reads_go_on(
    tmp_path: Path,
) -> None:
    clock = Steps(calm=2)
    engine = SqliteEngine(tmp_path / "budget.db", monotonic=clock)
    await engine.open()
    try:
        with pytest.raises(QueryTimeout) as late:
            await engine.query(_count, budget=3.0)
        assert late.value.extra["retry_after"] > 0
        clock.stop()
        # The lane is free again, and the plain reads never waited on it.
        assert await engine.read(lambda r: r.messages.last_seq()) == 0
        assert await engine.query(lambda r: r.messages.last_seq(), budget=3.0) == 0
    finally:
        await engine.close()


async def test_a_sqlite_read_that_cannot_start_within_its_budget_is_refused(
    tmp_path: Path,
) -> None:
    engine = SqliteEngine(tmp_path / "budget.db", monotonic=Steps(calm=1))
    await engine.open()
    try:
        with pytest.raises(QueryTimeout):
            await engine.query(lambda r: r.messages.last_seq(), budget=3.0)
    finally:
        await engine.close()


async def test_a_postgres_read_runs_under_what_is_left_of_its_budget(
    postgres_server: Server,
) -> None:
    engine = PgEngine(fresh_database(postgres_server))
    await engine.open()
    try:

        def budget(r: Repos) -> Any:
            return r.tx._conn.execute(  # type: ignore[attr-defined]
                "SELECT current_setting('statement_timeout')"
            ).fetchone()

        (setting,) = (await engine.query(budget, budget=2.0)).values()
        assert setting.endswith("ms") or setting.endswith("s")
        assert 1000 <= _ms(setting) <= 2000

        def sleeps(r: Repos) -> Any:
            return r.tx._conn.execute("SELECT pg_sleep(30)").fetchone()  # type: ignore[attr-defined]

        started = asyncio.get_running_loop().time()
        with pytest.raises(QueryTimeout):
            await engine.query(sleeps, budget=0.2)
        assert asyncio.get_running_loop().time() - started < 25  # canceled, not slept out

        # A plain read on the same engine has no budget of its own.
        def plain(r: Repos) -> Any:
            return r.tx._conn.execute(  # type: ignore[attr-defined]
                "SELECT current_setting('statement_timeout')"
            ).fetchone()

        assert list((await engine.read(plain)).values()) == ["0"]
    finally:
        await engine.close()


def _ms(setting: str) -> int:
    if setting.endswith("ms"):
        return int(setting[:-2])
    return int(float(setting[:-1]) * 1000)
