"""The deliveries table on PostgreSQL is vacuumed by the hub as it churns
(storage/postgres_tidy.py): autovacuum's once-a-minute visit let dead row versions pile up
between visits and slow every claim (ADR 0016's addendum has the figures). It runs on the
hub's maintenance tick (`Engine.upkeep`)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import psycopg
from psycopg.conninfo import make_conninfo

from caucus.services.hub import Hub
from caucus.storage.postgres_engine import PgEngine
from caucus.storage.postgres_tidy import vacuum_with
from caucus.storage.queries import queries
from caucus.testing import FakeClock, hub_settings
from caucus.testing.postgres import Server, fresh_database
from tests.contract.conftest import NOW
from tests.contract.test_store_contract import claim, peer, send


def vacuum_count(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'deliveries'"
        ).fetchone()
    assert row is not None
    return int(row[0])


async def churn(engine: PgEngine, messages: int, pair: str = "") -> None:
    """Messages sent, handed out and acknowledged: each leaves dead row versions behind."""
    a, b = await peer(engine, f"a{pair}"), await peer(engine, f"b{pair}")
    ack = None
    for i in range(messages):
        await send(engine, a, b.name, f"m{i}")
        got = await claim(engine, b, ack=ack)
        ack = got.deliveries[-1].message.seq
    await claim(engine, b, ack=ack)


async def test_the_hub_vacuums_deliveries_once_enough_was_written(
    postgres_server: Server,
) -> None:
    dsn = fresh_database(postgres_server)
    engine = PgEngine(dsn, tidy_churn=100)
    await engine.open()
    try:
        await churn(engine, 20)  # ~40 units: under the churn that calls for a vacuum
        assert await engine.tidy.maybe() is False
        before = vacuum_count(dsn)
        await churn(engine, 40, "2")
        assert await engine.tidy.maybe() is True
        assert await engine.tidy.maybe() is False  # nothing written since
    finally:
        await engine.close()
    assert vacuum_count(dsn) == before + 1


async def test_the_hubs_maintenance_round_vacuums_it(
    postgres_server: Server, tmp_path: Path
) -> None:
    dsn = fresh_database(postgres_server)
    engine = PgEngine(dsn, tidy_churn=50)
    hub = Hub(hub_settings(tmp_path), db=engine, clock=FakeClock(NOW), run_maintenance=False)
    await hub.start()
    try:
        before = vacuum_count(dsn)
        await churn(engine, 40)
        await hub.maintain()
        assert engine.tidy.vacuums == 1
        await hub.maintain()  # nothing written since: no second vacuum
        assert engine.tidy.vacuums == 1
    finally:
        await hub.stop()
    assert vacuum_count(dsn) == before + 1


def test_a_role_that_does_not_own_the_table_gets_the_servers_warning_back(
    postgres_server: Server,
) -> None:
    """PostgreSQL skips a table the role does not own with a warning, not an error: the hub
    reads it back to say what to do (once), and goes on."""
    dsn = fresh_database(postgres_server)
    engine = PgEngine(dsn)
    asyncio.run(_opened_and_closed(engine))  # migrates: the tables belong to the owner
    role = f"visitor_{int(time.time() * 1000) % 10**8}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'visitor'".encode())
        conn.execute(f"GRANT ALL ON deliveries TO {role}".encode())
    visitor = make_conninfo(dsn, user=role, password="visitor")

    def connection() -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(visitor, autocommit=True)

    notices = vacuum_with(connection, queries("postgres")["deliveries_vacuum"])()
    assert notices
    assert any("deliveries" in n for n in notices), notices
    owner = vacuum_with(lambda: psycopg.connect(dsn, autocommit=True), "VACUUM deliveries")()
    assert owner == []


async def _opened_and_closed(engine: PgEngine) -> None:
    await engine.open()
    await engine.close()
