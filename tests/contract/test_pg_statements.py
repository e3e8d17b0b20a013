"""Every PostgreSQL named statement compiles against the migrated schema (a typo in a column, a
table or a type fails here, not in the first hub that runs it), as
tests/unit/test_queries.py checks SQLite's; and the writer's grouped statements are planned
once, not at every batch."""

from __future__ import annotations

import asyncio
import re

import psycopg

from caucus.domain.names import Target, TargetKind
from caucus.services.delivery_units import Append, Claim
from caucus.storage.migrate import migrate_postgres
from caucus.storage.postgres_engine import PgEngine
from caucus.storage.queries import queries
from caucus.testing.postgres import Server, fresh_database
from tests.contract.test_store_contract import peer
from tests.contract.test_together_contract import direct, request

_EXPLAINABLE = re.compile(r"(SELECT|INSERT|UPDATE|DELETE|WITH)\b")


def test_every_postgres_statement_compiles_against_the_migrated_schema(
    postgres_server: Server,
) -> None:
    dsn = fresh_database(postgres_server)
    migrate_postgres(dsn)
    q = queries("postgres")
    assert q.names()
    with psycopg.connect(dsn, autocommit=True) as conn:
        for name in sorted(q.names()):
            text = q[name]
            params = dict.fromkeys(re.findall(r"%\(([a-z_]+)\)[sb]", text))
            # What cannot be explained (LISTEN, DDL) runs, and is rolled back.
            run = f"EXPLAIN {text}" if _EXPLAINABLE.match(text.lstrip()) else text
            if text.startswith("VACUUM"):  # it cannot run inside a transaction: it just runs
                conn.execute(run, params)
                continue
            try:
                with conn.transaction():
                    conn.execute(run, params)
                    raise psycopg.Rollback
            except psycopg.Error as exc:
                raise AssertionError(f"{name}: {exc}") from None


def test_the_size_bound_reads_what_every_message_column_stores(postgres_server: Server) -> None:
    """`message_row_bytes` (retention's size bound on PostgreSQL, storage/postgres_size.py)
    adds the columns up by name: one a migration adds and the statement forgets would go
    uncounted, and the bound would keep more than it says."""
    dsn = fresh_database(postgres_server)
    migrate_postgres(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        columns = [
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'messages' AND table_schema = current_schema()"
            )
        ]
    statement = queries("postgres")["message_row_bytes"]
    assert len(columns) > 10
    assert [c for c in columns if f"pg_column_size({c})" not in statement] == []


# What each statement a writer's group runs as (`storage.engine.Together`) says of itself.
GROUPED = {"sends": "INSERT INTO messages", "claims": "acked AS ("}


async def test_a_group_s_statement_is_planned_once(postgres_server: Server) -> None:
    """The statement a batch's direct sends or claims run as is planned once (a generic plan),
    not afresh at every batch: custom plans cost the server 0.4-0.9 ms a batch (ADR 0045).
    Read in the writer's own session, where its prepared statements live."""
    engine = PgEngine(fresh_database(postgres_server))
    await engine.open()
    try:
        senders = [await peer(engine, f"s{i}") for i in range(3)]
        receivers = [await peer(engine, f"r{i}") for i in range(3)]
        for _ in range(8):  # past psycopg's threshold for preparing a statement (5 runs)
            await asyncio.gather(
                *(
                    engine.write(Append(direct(s, f"r{i}"), Target(TargetKind.PEER, f"r{i}"), 0.0))
                    for i, s in enumerate(senders)
                )
            )
            await asyncio.gather(*(engine.write(Claim(request(r))) for r in receivers))
        rows = await engine.write(
            lambda r: r.tx._conn.execute(  # type: ignore[attr-defined]  # the writer's session
                "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
            ).fetchall()
        )
    finally:
        await engine.close()
    plans = {
        kind: (row["generic_plans"], row["custom_plans"])
        for kind, marker in GROUPED.items()
        for row in rows
        if marker in row["statement"] and "unnest" in row["statement"]
    }
    assert set(plans) == set(GROUPED), rows
    for kind, (generic, custom) in plans.items():
        assert (generic > 0, custom) == (True, 0), f"{kind}: {generic} generic, {custom} custom"
