"""Each backend's numbered migrations converge to its schema file (issue 14): an empty
database migrated step by step has the same tables, columns, keys and indexes as one created
from `sql/<dialect>/schema.sql` in one go."""

from __future__ import annotations

import re
import sqlite3
from importlib import resources
from pathlib import Path
from typing import Any

from caucus.storage.migrate import load_migrations, migrate_postgres, migrate_sqlite
from caucus.testing.postgres import Server, fresh_database


def schema_file(dialect: str) -> str:
    return (resources.files("caucus.storage") / "sql" / dialect / "schema.sql").read_text()


def _sqlite_shape(conn: sqlite3.Connection) -> dict[str, Any]:
    shape: dict[str, Any] = {}
    objects = conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master"
        " WHERE name NOT LIKE 'sqlite_%' AND name != 'schema_migrations'"
    ).fetchall()
    for kind, name, table, sql in objects:
        if kind == "table":
            columns = conn.execute(f"PRAGMA table_xinfo({name})").fetchall()
            rowid = "WITHOUT ROWID" not in (sql or "").upper()
            checks = sorted(re.findall(r"CHECK\s*\((.*?)\)\)?,?\n", re.sub(r"\s+", " ", sql)))
            shape[f"table {name}"] = (sorted(c[1:] for c in columns), rowid, checks)
        elif kind == "index":
            unique, partial = next(
                (r[2], r[4]) for r in conn.execute(f"PRAGMA index_list({table})") if r[1] == name
            )
            cols = [r[2] for r in conn.execute(f"PRAGMA index_xinfo({name})") if r[5]]
            where = (
                re.sub(r"\s+", " ", sql.split(" WHERE ", 1)[1]) if " WHERE " in (sql or "") else ""
            )
            shape[f"index {name}"] = (table, unique, partial, cols, where)
    return shape


def test_sqlite_migrations_converge_to_the_schema_file(tmp_path: Path) -> None:
    migrated = sqlite3.connect(tmp_path / "migrated.db")
    fresh = sqlite3.connect(tmp_path / "fresh.db")
    try:
        migrate_sqlite(migrated)
        fresh.executescript(schema_file("sqlite"))
        ours, theirs = _sqlite_shape(migrated), _sqlite_shape(fresh)
        assert ours.keys() == theirs.keys()
        for key in ours:
            assert ours[key] == theirs[key], key
    finally:
        migrated.close()
        fresh.close()


_PG_SHAPE = {
    "columns": "SELECT table_name, column_name, data_type, is_nullable, column_default,"
    " is_identity FROM information_schema.columns WHERE table_schema = 'public'"
    " AND table_name != 'schema_migrations'",
    "indexes": "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"
    " AND tablename != 'schema_migrations'",
    "constraints": "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid)"
    " FROM pg_constraint WHERE connamespace = 'public'::regnamespace"
    " AND conrelid::regclass::text != 'schema_migrations'",
    "sequences": "SELECT sequence_name FROM information_schema.sequences"
    " WHERE sequence_schema = 'public'",
}


def _pg_shape(dsn: str) -> dict[str, list[tuple[Any, ...]]]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        return {k: sorted(conn.execute(q.encode()).fetchall()) for k, q in _PG_SHAPE.items()}


def test_postgres_migrations_converge_to_the_schema_file(postgres_server: Server) -> None:
    import psycopg

    migrated, fresh = fresh_database(postgres_server), fresh_database(postgres_server)
    assert migrate_postgres(migrated) == [m.version for m in load_migrations("postgres")]
    assert migrate_postgres(migrated) == []  # a second run has nothing to do
    with psycopg.connect(fresh, autocommit=True) as conn:
        conn.execute(schema_file("postgres").encode())
    ours, theirs = _pg_shape(migrated), _pg_shape(fresh)
    for key in _PG_SHAPE:
        assert ours[key] == theirs[key], key
    assert ours["columns"]  # there is a schema to compare
