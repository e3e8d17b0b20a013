"""Reaching into a hub's database behind its back, on either backend: how tests simulate a
crash between two writes (the hub is stopped while they do it)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from caucus.services.hub import Hub

Database = str | Path  # a SQLite file, or a postgresql:// URL


def database_of(hub: Hub) -> Database:
    if hub.settings.postgres:
        return hub.settings.db
    assert hub.db_path is not None
    return hub.db_path


def execute(db: Database, sql: str, rows: Sequence[tuple[Any, ...]] = ((),)) -> list[Any]:
    """Run `sql` (with `?` placeholders) once per row; the first row's result, if any."""
    if isinstance(db, str) and db.startswith(("postgresql://", "postgres://")):
        import psycopg

        with psycopg.connect(db) as pg:
            found: list[Any] = []
            for row in rows:
                cur = pg.execute(sql.replace("?", "%s").encode(), row)
                if not found and cur.description is not None:
                    found = list(cur.fetchall())
            return found
    conn = sqlite3.connect(db)
    try:
        with conn:
            found = []
            for row in rows:
                cur = conn.execute(sql, row)
                if not found and cur.description is not None:
                    found = cur.fetchall()
            return found
    finally:
        conn.close()
