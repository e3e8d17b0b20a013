"""Reads are indexed, not scanned (issue 53): the plan each backend makes for every hot read
of the message log, the inboxes and the tasks finds its rows through an index, never by
reading the whole table, so what a read costs does not grow with the history kept.

SQLite: `EXPLAIN QUERY PLAN` may not `SCAN` one of those tables (a `SEARCH` seeks; `SCAN`
reads from one end). PostgreSQL: with sequential scans priced out (`enable_seqscan = off`),
`EXPLAIN` may not still choose one, nor walk an index with no condition to seek by. A few reads
walk an index in its order and stop at their LIMIT; each is named below with why.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from caucus.storage.migrate import migrate_postgres, migrate_sqlite
from caucus.storage.queries import positional, queries
from caucus.storage.sqlite_engine import SqliteTx
from caucus.storage.sqlite_index import attach, index_path, prepare
from caucus.testing.postgres import Server, fresh_database

# Every read whose cost could follow the history: the transcript and its text filter, the
# agents' exports, threads and search, the sent counts, the followers' slices, retention, the
# inbox, and every task list.
HOT = (
    "messages_before",
    "messages_before_matching",
    "messages_after",
    "messages_readable_after",
    "thread_messages",
    "messages_by_sender_after",
    "messages_slice_end",
    "messages_last_seq",
    "message_parent",
    "message_parent_by_seq",
    "sent_counts_add",
    "search_messages",
    "search_next_upto",
    "search_unindexed",
    "purgeable_messages",
    "purgeable_tasks",
    "deliveries_visible",
    "deliveries_visible_priority",
    "deliveries_next_visible",
    "delivery_newest_of_peer",
    "deliveries_count_of_peer",
    "deliveries_count",
    "tasks_sent_by",
    "tasks_worked_by",
    "tasks_all",
    "tasks_in_state",
    "tasks_ready",
    "tasks_silent",
    "tasks_stale",
    "tasks_of_ended_workers",
)
# Walks in an index's order that stop at their LIMIT (the plan cannot tell them from a scan).
WALKS = {
    "tasks_all": "every task, most recently changed first: the newest `limit` of tasks_updated",
    "deliveries_count": "the queue depth, counted up to a cap",
}
WATCHED = {"messages", "deliveries", "tasks"}
ALIASES = {"m": "messages", "d": "deliveries", "t": "tasks"}

BASE: dict[str, Any] = {
    "before": None,
    "limit": 200,
    "peer": None,
    "peer_json": None,
    "channel": None,
    "kind": None,
    "match_fts": '"zebrafish"',
    "match_tsquery": "'zebrafish'",
    "seq": 0,
    "since": None,
    "until": None,
    "reader": None,
    "thread": "a-thread",
    "upto": 0,
    "through": 10,
    "peer_id": 1,
    "worker_id": 1,
    "state": None,
    "now": 1.0,
    "silent_before": 1.0,
    "id": "m_1",
    "sender": None,
    "kinds": None,
    "recent": 0,
    "window": 100,
    "cap": 100_000,
}
# Every filter given, as the console, an agent and a sweep ask.
FILTERED = {
    "before": 100,
    "peer": "alice",
    "peer_json": '"alice"',
    "channel": "#ops",
    "kind": "chat",
    "reader": 3,
    "since": 1.0,
    "until": 2.0,
    "state": "pending",
    "sender": "alice",
}
VARIANTS = pytest.mark.parametrize("given", [{}, FILTERED], ids=["plain", "filtered"])


def scanned_sqlite(conn: sqlite3.Connection, name: str, given: dict[str, Any]) -> list[str]:
    sql, bind = positional(queries("sqlite")[name])
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, bind(BASE | given))]
    scans = []
    for step in plan:
        found = re.match(r"SCAN (\w+)", step)
        if found and ALIASES.get(found.group(1), found.group(1)) in WATCHED:
            scans.append(step)
    return scans


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("plans") / "plans.db"
    conn = sqlite3.connect(path)
    migrate_sqlite(conn)
    tx = SqliteTx(conn, queries("sqlite"))  # the search index's file, as the engine opens it
    attach(tx, index_path(path))
    prepare(tx, 2)
    yield conn
    conn.close()


@VARIANTS
@pytest.mark.parametrize("name", HOT)
def test_sqlite_reads_seek_by_index(sqlite_db: sqlite3.Connection, name: str, given: Any) -> None:
    scans = scanned_sqlite(sqlite_db, name, given)
    if name in WALKS:
        return
    assert scans == [], f"{name} reads a whole table: {scans}"


# The transcript's page before issue 53: `(:before IS NULL OR seq < :before)` hid the key
# range from the planner, and the text filter read every message's content.
OLD_PAGE = (
    "SELECT * FROM messages WHERE ({before} IS NULL OR seq < {before}) "
    "AND {text} > 0 ORDER BY seq DESC LIMIT 200"
)


def test_a_scan_is_caught(sqlite_db: sqlite3.Connection) -> None:
    sql = OLD_PAGE.format(before="?", text="instr(lower(content), 'x')")
    plan = sqlite_db.execute("EXPLAIN QUERY PLAN " + sql, (100, 100)).fetchall()
    assert [row[3] for row in plan if row[3].startswith("SCAN messages")]


def seq_scans(plan: Any) -> list[str]:
    """The relations a PostgreSQL plan (EXPLAIN's JSON) reads whole: sequentially, or along an
    index with nothing to seek by (no index condition: a walk from one end)."""
    found: list[str] = []
    if isinstance(plan, dict):
        node = plan.get("Node Type")
        walk = node in ("Index Scan", "Index Only Scan") and "Index Cond" not in plan
        if node == "Seq Scan" or walk:
            found.append(str(plan.get("Relation Name")))
        for value in plan.values():
            found += seq_scans(value)
    elif isinstance(plan, list):
        for item in plan:
            found += seq_scans(item)
    return found


@pytest.fixture(scope="module")
def pg_db(postgres_server: Server) -> Any:
    import psycopg

    dsn = fresh_database(postgres_server)
    migrate_postgres(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off")
        yield conn


@VARIANTS
@pytest.mark.parametrize("name", HOT)
def test_postgres_reads_seek_by_index(pg_db: Any, name: str, given: Any) -> None:
    sql = queries("postgres")[name]
    (row,) = pg_db.execute(f"EXPLAIN (FORMAT JSON) {sql}".encode(), BASE | given).fetchall()
    scans = [r for r in seq_scans(row[0]) if r in WATCHED]
    if name in WALKS:
        return
    assert scans == [], f"{name} reads a whole table: {scans}"


def test_a_seq_scan_is_caught(pg_db: Any) -> None:
    sql = OLD_PAGE.format(before="CAST(%(b)s AS BIGINT)", text="strpos(lower(content), 'x')")
    (row,) = pg_db.execute(f"EXPLAIN (FORMAT JSON) {sql}".encode(), {"b": None}).fetchall()
    assert seq_scans(row[0]) == ["messages"]


def test_every_hot_read_is_a_statement_of_both_stores(tmp_path: Path) -> None:
    for dialect in ("sqlite", "postgres"):
        for name in HOT:
            assert queries(dialect)[name]


# The writer's grouped statements (`storage.postgres_writer`): planned once, generic, for any
# arrays, so that plan must seek too.
GROUPED = ("messages_insert_direct_many", "deliveries_ack_claim_many")


@pytest.mark.parametrize("name", GROUPED)
def test_postgres_grouped_writes_seek_by_index_under_a_generic_plan(pg_db: Any, name: str) -> None:
    text = queries("postgres")[name]
    names = list(dict.fromkeys(re.findall(r"%\(([a-z_]+)\)[sb]", text)))
    numbered = re.sub(r"%\(([a-z_]+)\)[sb]", lambda m: f"${names.index(m.group(1)) + 1}", text)
    pg_db.execute(f"PREPARE grouped AS {numbered}".encode())
    try:
        pg_db.execute(b"SET plan_cache_mode = force_generic_plan")
        nulls = ", ".join(["NULL"] * len(names))
        (row,) = pg_db.execute(
            f"EXPLAIN (FORMAT JSON, VERBOSE) EXECUTE grouped({nulls})".encode()
        ).fetchall()
    finally:
        pg_db.execute(b"DEALLOCATE grouped")
        pg_db.execute(b"RESET plan_cache_mode")
    assert "$1" in json.dumps(row[0])  # the plan made for any values, not for these
    assert [r for r in seq_scans(row[0]) if r in WATCHED] == []


def cte_scans_per_row(plan: Any, inside: bool = False) -> list[str]:
    """The CTEs a plan scans again for each row of another step (a scan under a SubPlan):
    what makes a grouped statement's cost grow with the square of its batch."""
    found: list[str] = []
    if isinstance(plan, dict):
        inside = inside or plan.get("Parent Relationship") == "SubPlan"
        if inside and plan.get("Node Type") == "CTE Scan":
            found.append(str(plan.get("CTE Name")))
        for value in plan.values():
            found += cte_scans_per_row(value, inside)
    elif isinstance(plan, list):
        for item in plan:
            found += cte_scans_per_row(item, inside)
    return found


@pytest.mark.parametrize("name", GROUPED)
def test_postgres_grouped_writes_are_linear_in_their_batch(pg_db: Any, name: str) -> None:
    """No step of a grouped statement reads another step's rows once per row of its own: a
    claim statement that did (counting each peer's acknowledged and handed-out rows by
    scanning them all, per peer) cost the server 190 us a message at 500 receives a batch,
    against 90 once counted by peer (ADR 0045)."""
    text = queries("postgres")[name]
    params = dict.fromkeys(re.findall(r"%\(([a-z_]+)\)[sb]", text))
    (row,) = pg_db.execute(f"EXPLAIN (FORMAT JSON) {text}".encode(), params).fetchall()
    assert cte_scans_per_row(row[0]) == []
