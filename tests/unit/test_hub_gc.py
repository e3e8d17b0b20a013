"""The hub's collector settings (`cli/hub_server.py`): what lives as long as the process is
frozen out of every collection, including what `/mcp` loads after the hub serves."""

from __future__ import annotations

import gc
from types import SimpleNamespace
from typing import Any

from caucus.cli.hub_server import HubServer


class Door:
    def __init__(self, *, fails: bool) -> None:
        self.fails = fails

    async def loaded(self) -> object:
        if self.fails:
            raise RuntimeError("the MCP endpoint failed to load")
        return object()


async def test_what_mcp_loads_after_the_start_is_frozen_too() -> None:
    for fails in (False, True):
        gc.unfreeze()
        loaded_later: list[Any] = [[i] for i in range(1000)]  # as an import would leave
        before = gc.get_freeze_count()
        try:
            server: Any = SimpleNamespace(mcp=Door(fails=fails))
            await HubServer._freeze_once_mcp_loads(server)
            assert gc.get_freeze_count() >= before + len(loaded_later)
        finally:
            gc.unfreeze()
