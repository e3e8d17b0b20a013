"""A PostgreSQL hub given no ledger path and no files directory keeps its ledger under the
room's identity, which the database holds: two rooms on two databases never share a chain, two
hub processes of one room share one, every folder made for it is private, and a room whose
records were in the old shared ledger takes them along (issue 31)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from caucus.files import private_dir
from caucus.ledger.commands import verify
from caucus.services.hub import Hub
from caucus.testing import make_hub
from caucus.testing.postgres import Server, fresh_database

FIELDS = [{"key": "go", "type": "radio", "options": ["yes", "no"]}]


@asynccontextmanager
async def room(folder: Path, url: str, **overrides: Any) -> AsyncIterator[Hub]:
    async with make_hub(folder, db=url, files_dir="", **overrides) as hub:
        yield hub


async def decide(hub: Hub, title: str) -> str:
    peer = (await hub.principals.register(name=f"asker{title}")).peer
    form = await hub.forms.ask(peer, title, FIELDS)
    answered = await hub.forms.answer(form.id, {"go": "yes"})
    assert answered.decision_hash is not None
    return answered.decision_hash


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


async def test_rooms_on_two_databases_keep_two_ledgers_and_one_room_one(
    postgres_server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home" / "caucus"
    monkeypatch.setenv("CAUCUS_HOME", str(home))
    first, second = fresh_database(postgres_server), fresh_database(postgres_server)
    async with room(tmp_path / "a", first) as a, room(tmp_path / "b", second) as b:
        assert a.decisions.path != b.decisions.path
        assert a.decisions.path.parent.parent == home / "rooms"
        await decide(a, "one")
        await decide(b, "two")
        async with room(tmp_path / "a2", first) as again:  # a second process of room a
            assert again.decisions.path == a.decisions.path
    for path in (a.decisions.path, b.decisions.path):
        outcome = verify(path)
        assert (outcome.code, outcome.data["records"]) == (0, 1)
    for folder in (home.parent, home, home / "rooms", a.decisions.path.parent):
        assert mode(folder) == 0o700, folder


async def test_a_room_whose_records_were_in_the_shared_ledger_takes_a_copy(
    postgres_server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("CAUCUS_HOME", str(home))
    shared = home / "decisions.jsonl"  # where an older hub kept every room's ledger
    old, other = fresh_database(postgres_server), fresh_database(postgres_server)
    async with room(tmp_path / "old", old, ledger=str(shared)) as before:
        recorded = await decide(before, "then")
    async with room(tmp_path / "now", old) as now:
        assert now.decisions.path != shared
        (record,) = await now.decisions.recent(10, None)
        assert record.record["hash"] == recorded
        await decide(now, "later")
    assert verify(now.decisions.path).data["records"] == 2
    assert verify(shared).data["records"] == 1  # the shared file is left as it was
    async with room(tmp_path / "other", other) as stranger:  # none of its records there
        assert await stranger.decisions.recent(10, None) == []


def test_every_folder_a_private_dir_creates_is_0700(tmp_path: Path) -> None:
    deep = private_dir(tmp_path / "a" / "b" / "c")
    for folder in (tmp_path / "a", tmp_path / "a" / "b", deep):
        assert mode(folder) == 0o700
