"""Migrations apply once and refuse a newer database (that they converge to the schema file is
tests/migration/test_schema_files.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from caucus.storage.migrate import load_migrations, migrate_sqlite


def schema_of(conn: sqlite3.Connection) -> str:
    rows = conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"
        " AND name NOT LIKE 'sqlite_%' ORDER BY type, name"
    ).fetchall()
    return "\n".join(" ".join(sql.split()) + ";" for _, _, sql in rows) + "\n"


def migrated(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    migrate_sqlite(conn)
    return conn


def test_migrations_are_numbered_without_gaps() -> None:
    versions = [m.version for m in load_migrations("sqlite")]
    assert versions == list(range(1, len(versions) + 1))


def test_migrating_twice_changes_nothing(tmp_path: Path) -> None:
    conn = migrated(tmp_path / "twice.db")
    try:
        before = schema_of(conn)
        assert migrate_sqlite(conn) == []
        assert schema_of(conn) == before
    finally:
        conn.close()


def test_a_database_from_a_newer_caucus_is_refused(tmp_path: Path) -> None:
    conn = migrated(tmp_path / "newer.db")
    try:
        conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', datetime('now'))")
        with pytest.raises(RuntimeError, match="newer than this Caucus"):
            migrate_sqlite(conn)
    finally:
        conn.close()
