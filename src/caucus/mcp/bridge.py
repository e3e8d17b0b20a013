"""`caucus bridge`: the tool catalog as a stdio MCP server, for hosts that spawn one per session.

Dormant until `join`. Talks to the hub over HTTP with `HubClient`. The session's token lives in
memory and, for `caucus watch`, in a 0600 session file (never on a command line); the file is
removed on leave and when the bridge exits. Nothing but JSON-RPC goes to stdout.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import sys
from pathlib import Path

from caucus.client import HubClient
from caucus.config import user_data_dir
from caucus.domain.names import RESERVED_NAMES
from caucus.mcp.ports import HubPort, RemotePort
from caucus.mcp.tools import Catalog
from caucus.mcp.watch import Session, write_session

_INVALID = re.compile(r"[^A-Za-z0-9._-]+")


def default_name(cwd: Path | None = None) -> str | None:
    """`CAUCUS_NAME`, else the working directory's name made into a valid peer name."""
    configured = os.environ.get("CAUCUS_NAME")
    if configured:
        return configured
    base = _INVALID.sub("-", (cwd or Path.cwd()).name).strip("-.")[:64]
    if not base or base.lower() in RESERVED_NAMES:
        return None
    return base


def session_dir() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return Path(runtime) / "caucus" if runtime else user_data_dir() / "sessions"


class Bridge:
    def __init__(self, hub_url: str, *, name: str | None = None) -> None:
        self.hub_url = hub_url.rstrip("/")
        self.client = HubClient(self.hub_url)
        self.port = RemotePort(self.client)
        self.name = name
        self.session_file = session_dir() / f"{secrets.token_hex(8)}.session"

    def _default_name(self) -> str | None:
        return self.name or default_name()

    def watch_command(self, port: HubPort) -> str:
        return shlex.join(
            [sys.executable, "-m", "caucus", "watch", "--session", str(self.session_file)]
        )

    async def _joined(self, port: HubPort) -> None:
        assert port.name is not None
        assert port.token is not None
        write_session(self.session_file, Session(self.hub_url, port.name, port.token))

    async def _left(self, port: HubPort) -> None:
        self.session_file.unlink(missing_ok=True)

    async def run(self) -> None:
        catalog = Catalog(
            lambda _ctx: self.port,
            default_name=self._default_name,
            watch_command=self.watch_command,
            on_join=self._joined,
            on_leave=self._left,
        )
        try:
            await catalog.build().run_stdio_async()
        finally:
            self.session_file.unlink(missing_ok=True)
            await self.client.aclose()
