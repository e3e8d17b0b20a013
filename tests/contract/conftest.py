from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from caucus.services.hub import Hub
from caucus.storage.engine import Engine
from caucus.storage.postgres_engine import PgEngine
from caucus.storage.sqlite_engine import SqliteEngine
from caucus.testing import FakeClock, hub_settings
from caucus.testing.postgres import fresh_database

NOW = 1_000_000.0

BACKENDS = ("sqlite", "postgres")  # every backend runs the same contract


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def new_engine(backend: str, request: pytest.FixtureRequest) -> Callable[[Path], Engine]:
    """Makes an engine of the backend under test: a SQLite file in a folder, or a fresh
    database on the suite's PostgreSQL server."""
    if backend == "sqlite":
        return lambda folder: SqliteEngine(folder / "contract.db")
    server = request.getfixturevalue("postgres_server")
    return lambda _folder: PgEngine(fresh_database(server))


@pytest.fixture
async def db(new_engine: Callable[[Path], Engine], tmp_path: Path) -> AsyncIterator[Engine]:
    """The repositories, through the engine of each backend."""
    engine = new_engine(tmp_path)
    await engine.open()
    try:
        yield engine
    finally:
        await engine.close()


RoomFactory = Callable[..., Awaitable[Hub]]


@pytest.fixture
async def rooms(new_engine: Callable[[Path], Engine], tmp_path: Path) -> AsyncIterator[RoomFactory]:
    """Hubs whose services apply the rules above the repositories (tasks, the job board,
    forms, announcements) over each backend, on a clock that moves only when told; settings
    may be overridden per hub (a cap, say)."""
    started: list[Hub] = []

    async def make(**overrides: Any) -> Hub:
        folder = tmp_path / f"room{len(started)}"
        folder.mkdir()
        settings = hub_settings(folder, **{"announce_interval": 0, **overrides})
        hub = Hub(settings, db=new_engine(folder), clock=FakeClock(NOW), run_maintenance=False)
        await hub.start()
        started.append(hub)
        return hub

    try:
        yield make
    finally:
        for hub in reversed(started):
            await hub.stop()


@pytest.fixture
async def room(rooms: RoomFactory) -> Hub:
    return await rooms()
