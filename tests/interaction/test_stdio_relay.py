"""`caucus.testing.stdio_relay`: `caucus bridge` behind Streamable HTTP, driven by the official
SDK client; a process per session, ended with it; only the loopback is answered."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx2
from mcp import Client

from caucus.testing import serve_app
from caucus.testing.stdio_relay import StdioRelay, relay
from tests.interaction.test_mcp_http import INIT, JSON_RPC, rpc
from tests.mcptools import call


def _env(url: str, tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "CAUCUS_HUB": url, "XDG_RUNTIME_DIR": str(tmp_path / "run")}


async def test_an_sdk_client_joins_through_the_relay_and_each_session_is_its_own_bridge(
    url: str, tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "caucus", "bridge"]
    async with (
        relay(command, env=_env(url, tmp_path)) as endpoint,
        Client(endpoint, mode="legacy") as ann,
        Client(endpoint, mode="legacy") as bob,
    ):
        assert (await call(ann, "join", name="ann"))["name"] == "ann"
        assert (await call(bob, "join", name="bob"))["name"] == "bob"
        await call(ann, "say", to="bob", content="hello")
        heard = await call(bob, "listen", timeout=5)
        assert [m["content"] for m in heard["messages"]] == ["hello"]


async def test_the_relay_answers_the_loopback_only_and_delete_ends_the_process(
    url: str, tmp_path: Path
) -> None:
    app = StdioRelay([sys.executable, "-m", "caucus", "bridge"], env=_env(url, tmp_path))

    def config(served: object) -> object:
        import uvicorn

        return uvicorn.Config(served, log_level="warning", lifespan="off")  # type: ignore[arg-type]

    try:
        async with serve_app(config, app) as base, httpx2.AsyncClient(headers=JSON_RPC) as http:
            rebound = await http.post(
                f"{base}/mcp", json=rpc(1, "initialize", INIT), headers={"host": "evil.example"}
            )
            assert rebound.status_code == 421
            assert app.sessions == {}
            opened = await http.post(f"{base}/mcp", json=rpc(1, "initialize", INIT))
            assert opened.json()["result"]["serverInfo"]["name"] == "caucus"
            session = opened.headers["mcp-session-id"]
            [child] = app.sessions.values()
            ended = await http.delete(f"{base}/mcp", headers={"mcp-session-id": session})
            assert ended.status_code == 200
            assert child.process.returncode is not None
            gone = await http.post(
                f"{base}/mcp", json=rpc(2, "ping", {}), headers={"mcp-session-id": session}
            )
            assert gone.status_code == 404
            garbled = await http.post(
                f"{base}/mcp", content=b"{not json", headers={"content-type": "application/json"}
            )
            assert (garbled.status_code, garbled.json()["error"]["code"]) == (400, -32700)
    finally:
        await app.close()
