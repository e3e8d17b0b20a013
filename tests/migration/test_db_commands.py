"""`caucus db status` and `caucus db migrate` on each backend (issue 14): the version a
database is at, what it still needs, and bringing it up to date, as text and as JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from caucus.storage.migrate import load_migrations
from caucus.testing.postgres import Server, fresh_database


def caucus(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CAUCUS_HOME": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-m", "caucus", "db", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    if request.param == "sqlite":
        return "sqlite", str(tmp_path / "fresh.db")
    server: Server = request.getfixturevalue("postgres_server")
    return "postgres", fresh_database(server)


def test_status_then_migrate_then_status(database: tuple[str, str], tmp_path: Path) -> None:
    dialect, db = database
    newest = load_migrations(dialect)[-1].version
    before = caucus(tmp_path, "status", "--db", db, "--json")
    assert before.returncode == 0, before.stderr
    found = json.loads(before.stdout)
    assert (found["dialect"], found["version"], len(found["pending"])) == (dialect, 0, newest)
    if dialect == "postgres":  # shown without its password
        assert ":***@" in found["database"]
        assert db.split("@")[0].rsplit(":", 1)[1] not in found["database"]
    done = caucus(tmp_path, "migrate", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["applied_now"] == list(range(1, newest + 1))
    again = caucus(tmp_path, "migrate", "--db", db)
    assert again.returncode == 0, again.stderr
    assert "nothing to do" in again.stdout
    after = caucus(tmp_path, "status", "--db", db)
    assert f"schema version {newest}" in after.stdout
    assert "up to date" in after.stdout


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    done = caucus(tmp_path, "status", "--db", "postgresql://nobody:secret@127.0.0.1:9/none")
    assert done.returncode == 2
    assert "cannot read the database's schema" in done.stderr
    assert "secret" not in done.stderr + done.stdout
