"""Every PostgreSQL named statement compiles against the migrated schema (a typo in a column, a
table or a type fails here, not in the first hub that runs it), as
tests/unit/test_queries.py checks SQLite's."""

from __future__ import annotations

import re

import psycopg

from caucus.storage.migrate import migrate_postgres
from caucus.storage.queries import queries
from caucus.testing.postgres import Server, fresh_database

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
