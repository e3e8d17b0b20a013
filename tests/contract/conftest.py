from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from caucus.storage.base import Store
from caucus.storage.sqlite import SqliteStore

# Every backend runs the same contract. PostgreSQL joins this list when it lands.
BACKENDS: dict[str, Callable[[Path], Store]] = {
    "sqlite": lambda tmp: SqliteStore(tmp / "contract.db"),
}


@pytest.fixture(params=sorted(BACKENDS))
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    s = BACKENDS[request.param](tmp_path)
    await s.open()
    try:
        yield s
    finally:
        await s.close()
