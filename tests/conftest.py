from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from caucus.client import HubClient
from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from caucus.testing import FakeClock, make_hub, serve
from caucus.testing.postgres import ENV, NoPostgres, Server, throwaway_cluster
from tests.agentproc import AgentProcess
from tests.logwatch import no_credential_logged  # noqa: F401 - autouse, for every test
from tests.processes import PidWatch
from tests.waiting import eventually

__all__ = ["ClientFactory", "eventually"]

pytest_plugins = ["tests.process_plugin"]

ClientFactory = Callable[..., Awaitable[HubClient]]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def hub(tmp_path: Path, clock: FakeClock) -> AsyncIterator[Hub]:
    """A hub on a fresh SQLite file whose time moves only with `clock.advance()`."""
    async with make_hub(tmp_path, clock=clock, send_rate_capacity=1000) as h:
        yield h


@pytest.fixture
async def live_hub(tmp_path: Path) -> AsyncIterator[Hub]:
    """A hub on real time, for tests where time must pass by itself."""
    async with make_hub(tmp_path, send_rate_capacity=1000) as h:
        yield h


@pytest.fixture
async def url(live_hub: Hub) -> AsyncIterator[str]:
    """Base URL of `live_hub` served by a real uvicorn on an ephemeral loopback port."""
    async with serve(live_hub) as base:
        yield base


@pytest.fixture
async def connect(url: str) -> AsyncIterator[ClientFactory]:
    """Make registered HubClients against the served hub: `alice = await connect("alice")`."""
    clients: list[HubClient] = []

    async def factory(name: str | None = None, **register_args: object) -> HubClient:
        client = HubClient(url)
        clients.append(client)
        if name is not None:
            await client.register(name, **register_args)  # type: ignore[arg-type]
        return client

    yield factory
    for client in clients:
        await client.aclose()


@pytest.fixture
async def operator(url: str, live_hub: Hub) -> AsyncIterator[OperatorClient]:
    """The operator's client for the served hub."""
    async with OperatorClient(url, token=live_hub.operator.token) as client:
        yield client


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    """The suite's PostgreSQL server: a throwaway cluster, or `CAUCUS_TEST_POSTGRES`. Under
    CI a missing PostgreSQL fails the tier; elsewhere its tests skip, saying why."""
    try:
        with throwaway_cluster() as server:
            watch = None
            if server.pid is not None:
                watch = PidWatch("the PostgreSQL server", server.pid, server.log)
            try:
                yield server
            finally:
                if watch is not None:
                    watch.stop()
    except NoPostgres as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the PostgreSQL tier cannot run: {exc}")
        pytest.skip(str(exc))


@pytest.fixture(scope="session", autouse=True)
def _hubs_on_postgres(request: pytest.FixtureRequest) -> Iterator[None]:
    """CAUCUS_TEST_BACKEND=postgres runs every hub the tests make on a fresh database of the
    suite's PostgreSQL server instead of a SQLite file."""
    if os.environ.get("CAUCUS_TEST_BACKEND") != "postgres" or os.environ.get(ENV):
        yield
        return
    server: Server = request.getfixturevalue("postgres_server")
    os.environ[ENV] = server.admin_dsn
    try:
        yield
    finally:
        del os.environ[ENV]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked slow run first, so the workers never wait at the end on one long test
    handed out last (the whole pass is only as short as its last test); with
    CAUCUS_TEST_BACKEND=postgres, tests of the SQLite file itself do not apply."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    if os.environ.get("CAUCUS_TEST_BACKEND") != "postgres":
        return
    skip = pytest.mark.skip(reason="checks the SQLite file itself; the hubs run on PostgreSQL")
    for item in items:
        if item.get_closest_marker("sqlite_file") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
async def _no_agent_left_running() -> AsyncIterator[None]:
    """An agent process a failed test did not end is killed with its group in the test's own
    event loop, not left to the next test (tests/process_plugin.py catches any other)."""
    yield
    while AgentProcess.started:
        await AgentProcess.started.pop().reap()
