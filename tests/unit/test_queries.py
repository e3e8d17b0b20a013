"""Named statements (storage/queries.py): the file format, and the SQLite file itself."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from caucus.storage.migrate import migrate_sqlite
from caucus.storage.queries import blocks, combine, parse, positional, pyformat, queries
from caucus.storage.sqlite_engine import SqliteTx
from caucus.storage.sqlite_index import attach, index_path, prepare

SQL = Path(__file__).resolve().parents[2] / "src" / "caucus" / "storage" / "sql"


def test_blocks_are_split_by_name_and_comments_dropped() -> None:
    found = parse("-- a header\n-- name: one\nSELECT 1;\n\n-- name: two\n-- why\nSELECT\n  2;\n")
    assert found == {"one": "SELECT 1", "two": "SELECT\n  2"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("SELECT 0;\n-- name: one\nSELECT 1;", "before the first"),
        ("-- name: one\nSELECT 1;\n-- name: one\nSELECT 2;", "named twice"),
        ("-- name: one\n-- only a comment\n", "is empty"),
    ],
)
def test_a_file_that_reads_wrong_does_not_load(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse(text)


def test_a_fragment_is_set_in_wherever_a_statement_names_it() -> None:
    text = (
        "-- fragment: mine\n-- who may\nowner = :me OR :me IS NULL;\n"
        "-- name: one\nSELECT * FROM t WHERE a = 1 AND {{mine}};\n"
        "-- name: two\nSELECT {{mine}} FROM t;\n"
    )
    assert parse(text) == {
        "one": "SELECT * FROM t WHERE a = 1 AND (owner = :me OR :me IS NULL)",
        "two": "SELECT (owner = :me OR :me IS NULL) FROM t",
    }
    with pytest.raises(ValueError, match="no fragment 'theirs'"):
        parse("-- name: one\nSELECT {{theirs}};")
    with pytest.raises(ValueError, match="named twice"):
        parse("-- fragment: one\n1 = 1;\n-- name: one\nSELECT 1;")


def test_an_unknown_name_says_which_file(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match=r"sql/sqlite/queries\.sql"):
        queries("sqlite")["no_such_query"]


def test_a_dialect_may_not_redefine_a_shared_statement() -> None:
    with pytest.raises(ValueError, match=r"redefines one from sql/shared"):
        combine({"one": "SELECT 1", "two": "SELECT 2"}, {"one": "SELECT 1.0"}, "sqlite")
    assert combine({"one": "SELECT 1"}, {"two": "SELECT 2"}, "sqlite") == {
        "one": "SELECT 1",
        "two": "SELECT 2",
    }


def test_the_statements_both_dialects_run_as_written_are_written_once() -> None:
    """The shared file holds statements both dialects load (issue 32: 117 of the 149 both
    need), and neither dialect's own file repeats one the other has word for word."""
    sqlite, postgres = queries("sqlite").names(), queries("postgres").names()
    shared = set(blocks((SQL / "shared" / "queries.sql").read_text())[0])
    common = sqlite & postgres
    assert shared <= common
    assert len(shared) >= 110
    # What differs between the files differs in text: nothing identical left in both.
    own_sqlite = blocks((SQL / "sqlite" / "queries.sql").read_text())[0]
    own_postgres = blocks((SQL / "postgres" / "queries.sql").read_text())[0]
    assert [n for n in own_sqlite if own_postgres.get(n) == own_sqlite[n]] == []


def test_every_sqlite_statement_compiles_against_the_migrated_schema(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "q.db")
    try:
        migrate_sqlite(conn)
        q = queries("sqlite")
        tx = SqliteTx(conn, q)  # the search index's file, as the engine opens it
        attach(tx, index_path(tmp_path / "q.db"))
        prepare(tx, 2)
        assert q.names()
        for name in sorted(q.names()):
            # Maintenance statements take whole numbers formatted in (PRAGMAs bind nothing).
            text = re.sub(r"\{[a-z_]+\}", "1", q[name])
            for statement in _statements(text):  # a script (a file's setup): each of them
                if conn.in_transaction:  # a PRAGMA may not be explained inside one
                    conn.rollback()
                params = dict.fromkeys(re.findall(r":([a-z_]+)", statement))
                conn.execute(f"EXPLAIN {statement}", params)  # a typo in a column fails
    finally:
        conn.close()


def _statements(text: str) -> list[str]:
    """The statements of a named block, split where SQLite would end each."""
    found, current = [], ""
    for line in text.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            found.append(current.strip().rstrip(";"))
            current = ""
    return [*found, current.strip()] if current.strip() else found


def test_sqlite_statements_bind_by_position_in_the_order_names_appear() -> None:
    text, bind = positional(
        "SELECT :b, strftime('%H:%M', ts) FROM t WHERE a = :a AND b = :b AND c = :c_1"
    )
    assert text == "SELECT ?, strftime('%H:%M', ts) FROM t WHERE a = ? AND b = ? AND c = ?"
    assert bind({"a": 1, "b": 2, "c_1": 3, "unused": 4}) == (2, 1, 2, 3)
    one_text, one = positional("DELETE FROM t WHERE id = :id")
    assert (one_text, one({"id": 7})) == ("DELETE FROM t WHERE id = ?", (7,))
    assert positional("SELECT 1")[1]({}) == ()
    with pytest.raises(KeyError):
        bind({"a": 1})


def test_a_bound_statement_is_prepared_once_per_name() -> None:
    q = queries("sqlite")
    assert q.bound("message_insert") is q.bound("message_insert")
    text, _ = q.bound("message_insert")
    assert ":" not in text.replace("'", "")


def test_no_repository_branches_on_the_dialect() -> None:
    """A backend's cost model reaches the repositories as `Trips` (repos/trips.py), chosen by
    its engine; nothing in repos/ asks which database it is on (issue 32)."""
    repos = SQL.parent / "repos"
    asks = [
        f"{path.name}: {line.strip()}"
        for path in sorted(repos.glob("*.py"))
        for line in path.read_text().splitlines()
        if ".dialect" in line
    ]
    assert asks == []


def test_postgres_arrays_travel_in_binary_and_other_parameters_as_chosen() -> None:
    """A declared array is bound `%(name)b` (psycopg's text form escapes each string with a
    regular expression, twenty times slower); every other parameter stays `%(name)s`, and a
    literal percent sign is doubled."""
    sql = pyformat(
        "SELECT * FROM unnest(CAST(:ids AS TEXT[]), CAST( :tss AS DOUBLE PRECISION[] ))"
        " WHERE name = :name AND x LIKE '5%' AND state = ANY(:states)"
    )
    assert sql == (
        "SELECT * FROM unnest(CAST(%(ids)b AS TEXT[]), CAST( %(tss)b AS DOUBLE PRECISION[] ))"
        " WHERE name = %(name)s AND x LIKE '5%%' AND state = ANY(%(states)s)"
    )
    hot = queries("postgres")["messages_insert_direct_many"]
    assert "%(contents)b" in hot
    assert re.findall(r"%\((\w+)\)s", hot) == []  # the batched send takes arrays only
