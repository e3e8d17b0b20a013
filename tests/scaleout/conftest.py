from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from caucus.credentials import OPERATOR_TOKEN_FILE
from caucus.testing.postgres import Server, fresh_database
from tests.acceptance.hubproc import HubProcess, start_hub

Room = Callable[..., list[HubProcess]]
# Load tests send far faster than an agent's default budget allows.
FAST = {"CAUCUS_SEND_RATE_CAPACITY": "1000000", "CAUCUS_SEND_RATE_REFILL": "1000000"}


@pytest.fixture
def room(postgres_server: Server, tmp_path: Path) -> Iterator[Room]:
    """`room(n, env)`: n `caucus hub` processes on loopback, one PostgreSQL database between them,
    one home (so one operator token)."""
    started: list[HubProcess] = []
    dsn = fresh_database(postgres_server)

    def start(n: int, env: dict[str, str] | None = None) -> list[HubProcess]:
        new = [start_hub(dsn, home=tmp_path, env={**FAST, **(env or {})}) for _ in range(n)]
        started.extend(new)
        return new

    yield start
    for hub in started:
        hub.stop()


def operator_token(home: Path) -> str:
    return (home / OPERATOR_TOKEN_FILE).read_text().strip()
