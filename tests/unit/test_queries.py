"""Named statements (storage/queries.py): the file format, and the SQLite file itself."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from caucus.storage.migrate import migrate_sqlite
from caucus.storage.queries import parse, queries


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


def test_an_unknown_name_says_which_file(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match=r"sql/sqlite/queries\.sql"):
        queries("sqlite")["no_such_query"]


def test_every_sqlite_statement_compiles_against_the_migrated_schema(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "q.db")
    try:
        migrate_sqlite(conn)
        q = queries("sqlite")
        assert q.names()
        for name in sorted(q.names()):
            # Maintenance statements take whole numbers formatted in (PRAGMAs bind nothing).
            text = re.sub(r"\{[a-z_]+\}", "1", q[name])
            params = dict.fromkeys(re.findall(r":([a-z_]+)", text))
            conn.execute(f"EXPLAIN {text}", params)  # a typo in a column or table fails
    finally:
        conn.close()
