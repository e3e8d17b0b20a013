"""Numbered SQL migrations, applied in order at start, each in its own transaction."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from caucus.storage.queries import queries

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


def applied_sqlite(path: Path) -> list[int]:
    """The migrations a SQLite file has had (none for a file that is not there yet)."""
    if not path.exists():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        conn.execute(queries("sqlite")["migrations_done"]).fetchall()
    except sqlite3.OperationalError:  # no bookkeeping table: an empty file
        conn.close()
        return []
    try:
        return [row[0] for row in conn.execute(queries("sqlite")["migrations_done"])]
    finally:
        conn.close()


def applied_postgres(dsn: str) -> list[int]:
    """The migrations a PostgreSQL database has had."""
    import psycopg

    q = queries("postgres")
    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            return [row[0] for row in conn.execute(q["migrations_done"])]
        except psycopg.errors.UndefinedTable:
            return []


def migrate_sqlite(conn: sqlite3.Connection) -> list[int]:
    """Bring the schema up to date; return the versions applied now."""
    q = queries("sqlite")
    conn.execute(q["migrations_table"])
    done = {row[0] for row in conn.execute(q["migrations_done"])}
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
        record = q["migration_record"].format(version=m.version, name=m.name)
        script = f"{q['begin_immediate']};\n{m.sql}\n{record};\n{q['commit']};"
        try:
            conn.executescript(script)
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute(q["rollback"])
            raise
        applied.append(m.version)
    return applied


def migrate_postgres(dsn: str) -> list[int]:
    """Bring a PostgreSQL schema up to date, each migration in its own transaction under an
    advisory lock, so hub processes starting at once apply each migration once."""
    import psycopg

    q = queries("postgres")
    migrations = load_migrations("postgres")
    newest = migrations[-1].version if migrations else 0
    applied: list[int] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        with conn.transaction():
            conn.execute(q["migrations_lock"])
            conn.execute(q["migrations_table"])
        for m in migrations:
            with conn.transaction():
                conn.execute(q["migrations_lock"])
                done = {row[0] for row in conn.execute(q["migrations_done"])}
                if done and max(done) > newest:
                    raise RuntimeError(
                        f"database schema version {max(done)} is newer than this Caucus "
                        f"({newest}); upgrade Caucus or point --db at another database"
                    )
                if m.version in done:
                    continue
                conn.execute(m.sql.encode("utf-8"))
                conn.execute(q["migration_record"], {"version": m.version, "name": m.name})
                applied.append(m.version)
    return applied
