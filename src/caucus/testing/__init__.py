"""Test helpers that ship with Caucus, for its own tests and for yours.

- `FakeClock`: time you advance by hand (liveness, expiry) without sleeping.
- `make_hub()`: a fresh hub on a real SQLite file, started and stopped around the block.
- `serve()`: a real uvicorn server on an ephemeral loopback port, in the running event loop,
  serving exactly what `caucus hub` serves (`caucus.server.build_app`).
- `FakeAnthropic` and `serve_fake()`: a scripted fake of the Anthropic Messages API, to drive
  a real Claude Code offline (`ANTHROPIC_BASE_URL`); `Text`, `ToolUse` and the helpers
  `tool_names`, `tool_results`, `result_text` write its scripts.
- `FakeResponses` (OpenAI's Responses API, with `Custom` for a free-form tool call) and
  `FakeGemini` (the Gemini API): the same kind of fake, to drive a real Codex
  (`FakeResponses.codex_config`) and a real Gemini CLI (`GOOGLE_GEMINI_BASE_URL`,
  `FakeGemini.settings`) offline; their modules hold the helpers that read requests back.
- `FakeCodex`: a scripted stand-in for the Codex app-server's control socket
  (`caucus watch --push codex`), whose thread a test drives.
- `FakeOpenAI`: a scripted fake of an OpenAI-compatible server (`Say`, `Call`, `Stall`,
  `Status`, and the helpers `last_user`, `tool_messages`, `offered`), to drive `caucus agent`
  offline.
- `MockBackend` and its steps `Reply`, `CallTool`, `Delay`, `Fail`: a scripted backend for the
  agent runtime (`caucus agent --backend mock`): the one tool loop over a scripted model.
- `stdio_relay.relay()` (and `python -m caucus.testing.stdio_relay -- caucus bridge`): a stdio
  MCP server behind Streamable HTTP, one process per session, for tools that speak only HTTP
  (the MCP conformance suite runs against `caucus bridge` through it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn

from caucus.clock import Clock, ring
from caucus.config import Settings
from caucus.runtime.backends.mock import CallTool, Delay, Fail, MockBackend, Reply
from caucus.services.hub import Hub
from caucus.testing.fake_anthropic import (
    FakeAnthropic,
    Text,
    ToolUse,
    result_text,
    tool_names,
    tool_results,
)
from caucus.testing.fake_codex import FakeCodex
from caucus.testing.fake_gemini import FakeGemini
from caucus.testing.fake_openai import (
    Call,
    FakeOpenAI,
    Say,
    Stall,
    Status,
    last_user,
    offered,
    tool_messages,
)
from caucus.testing.fake_responses import Custom, FakeResponses

__all__ = [
    "Call",
    "CallTool",
    "Custom",
    "Delay",
    "Fail",
    "FakeAnthropic",
    "FakeClock",
    "FakeCodex",
    "FakeGemini",
    "FakeOpenAI",
    "FakeResponses",
    "MockBackend",
    "Reply",
    "Say",
    "Stall",
    "Status",
    "Text",
    "ToolUse",
    "hub_settings",
    "last_user",
    "make_hub",
    "offered",
    "result_text",
    "serve",
    "serve_app",
    "serve_fake",
    "tool_messages",
    "tool_names",
    "tool_results",
]

if TYPE_CHECKING:
    from caucus.server import CaucusApp


class FakeClock:
    """A clock that moves only when told to; `advance` rings the alarms it passes."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start
        self._mono = 1_000.0
        self._alarms: list[tuple[float, asyncio.Future[None]]] = []

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def alarm(self, at: float) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if at <= self._mono:
            ring(fut)
        else:
            self._alarms.append((at, fut))
        return fut

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time only moves forward")
        self._now += seconds
        self._mono += seconds
        due = [fut for at, fut in self._alarms if at <= self._mono]
        self._alarms = [(at, fut) for at, fut in self._alarms if at > self._mono and not fut.done()]
        for fut in due:
            ring(fut)


def _test_database(folder: Path) -> str:
    """A SQLite file in `folder`, or with CAUCUS_TEST_BACKEND=postgres a fresh database on the
    server CAUCUS_TEST_POSTGRES names (the suite's own cluster sets it)."""
    if os.environ.get("CAUCUS_TEST_BACKEND") == "postgres":
        from caucus.testing.postgres import Server, fresh_database

        # One database per folder: a hub restarted on the same folder finds its state again.
        key = str(folder.resolve())
        if key not in _TEST_DATABASES:
            _TEST_DATABASES[key] = fresh_database(Server(os.environ["CAUCUS_TEST_POSTGRES"]))
        return _TEST_DATABASES[key]
    return str(folder / "caucus.db")


_TEST_DATABASES: dict[str, str] = {}


def hub_settings(directory: Path | str | None = None, **overrides: Any) -> Settings:
    """Settings for a throwaway hub: its own SQLite file, ephemeral port, no env or file."""
    folder = Path(directory) if directory is not None else Path(tempfile.mkdtemp("-caucus"))
    # A test registers many peers from one address in a moment, and walks routes without a
    # token by the thousand; the flood tests set these back.
    values: dict[str, Any] = {
        "db": _test_database(folder),
        "files_dir": str(folder),
        "port": 0,
        "register_rate_capacity": 100_000.0,
        "shield_capacity": 1_000_000.0,
        "stranger_rate": 1_000_000.0,
    }
    values.update(overrides)
    return Settings(**values)


@asynccontextmanager
async def make_hub(
    directory: Path | str | None = None,
    *,
    clock: Clock | None = None,
    run_maintenance: bool = False,
    **overrides: Any,
) -> AsyncIterator[Hub]:
    """A started hub on a fresh SQLite file. Maintenance runs only when you call
    `hub.maintain()`, unless `run_maintenance=True`."""
    from caucus.server import open_hub

    hub = open_hub(
        hub_settings(directory, **overrides), clock=clock, run_maintenance=run_maintenance
    )
    await hub.start()
    try:
        yield hub
    finally:
        await hub.stop()


class _TestServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The test runner owns the process's signals; uvicorn must not take them over.
        yield


@asynccontextmanager
async def serve_app(config: Callable[[Any], uvicorn.Config], app: Any) -> AsyncIterator[str]:
    """Serve `app` over real HTTP on 127.0.0.1 and an ephemeral port; yields the base URL.
    `config(app)` makes its uvicorn configuration."""
    # IPPROTO_TCP so asyncio sets TCP_NODELAY (see caucus.cli.hub._bind).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port = sock.getsockname()[1]
    server = _TestServer(config(app))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("the test server stopped before it started")
            await asyncio.sleep(0.005)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@asynccontextmanager
async def serve(hub: Hub, app: CaucusApp | None = None) -> AsyncIterator[str]:
    """Serve `hub` over real HTTP on 127.0.0.1 and an ephemeral port; yields the base URL.

    The hub's lifecycle stays with the caller (start it before, stop it after). Leaving the
    block answers parked long-polls, as a hub shutting down does.
    """
    from caucus.server import build_app
    from caucus.web.serving import uvicorn_config

    def config(served: Any) -> uvicorn.Config:
        return uvicorn_config(
            served,
            hub.settings,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=2,
        )

    async with serve_app(config, app or build_app(hub)) as url:
        try:
            yield url
        finally:
            hub.begin_shutdown()  # parked long-polls answer before the server stops


@asynccontextmanager
async def serve_fake(
    fake: FakeAnthropic | FakeOpenAI | FakeResponses | FakeGemini,
) -> AsyncIterator[str]:
    """Serve a scripted model API on 127.0.0.1 and an ephemeral port; yields its base URL
    (what `ANTHROPIC_BASE_URL` or `GOOGLE_GEMINI_BASE_URL` is set to; for FakeOpenAI,
    `--base-url <url>/v1`)."""

    def config(app: Any) -> uvicorn.Config:
        return uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")

    async with serve_app(config, fake.app) as url:
        yield url
