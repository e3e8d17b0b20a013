"""Numbered SQL migrations, applied in order at start, each in its own transaction."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from importlib import resources

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def load_migrations(dialect: str) -> list[Migration]:
    folder = resources.files("caucus.storage").joinpath("sql", dialect)
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"{dialect} migrations must be numbered 1..n without gaps: {versions}")
    return found


def migrate_sqlite(conn: sqlite3.Connection) -> list[int]:
    """Bring the schema up to date; return the versions applied now."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    migrations = load_migrations("sqlite")
    newest = migrations[-1].version if migrations else 0
    if done and max(done) > newest:
        raise RuntimeError(
            f"database schema version {max(done)} is newer than this Caucus ({newest}); "
            "upgrade Caucus or point --db at another file"
        )
    applied: list[int] = []
    for m in migrations:
        if m.version in done:
            continue
        # executescript() commits first and runs the script as written, so the script carries
        # its own BEGIN/COMMIT and a failure leaves no half-applied migration.
        script = (
            "BEGIN IMMEDIATE;\n"
            + m.sql
            + "\nINSERT INTO schema_migrations (version, name, applied_at)"
            + f" VALUES ({m.version}, '{m.name}', datetime('now'));\nCOMMIT;"
        )
        try:
            conn.executescript(script)
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        applied.append(m.version)
    return applied
