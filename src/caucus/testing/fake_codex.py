"""A scripted stand-in for the Codex app-server's control socket, for testing push delivery.

It speaks what `caucus watch --push codex` relies on (WebSocket over a Unix socket, JSON-RPC
without the `jsonrpc` member): `initialize`, `thread/resume`, `turn/start`, `turn/steer`, and
the `turn/started`, `turn/completed` and `thread/status/changed` notifications. A test drives
the thread: `begin_turn()`, `finish_turn()`, `ask_approval()`, `approve()`, `stop()`; and reads
what arrived in `requests`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, unix_serve
from websockets.exceptions import ConnectionClosed


class FakeCodex:
    def __init__(self, path: Path, thread_id: str = "thr_caucus_test") -> None:
        self.path = path
        self.thread_id = thread_id
        self.requests: list[dict[str, Any]] = []
        self.state = "idle"  # idle, active, waiting
        self.turn_id: str | None = None
        self.arrived = asyncio.Event()
        self._turns = itertools.count(1)
        self._clients: set[ServerConnection] = set()
        self._server: Server | None = None

    async def __aenter__(self) -> FakeCodex:
        self._server = await unix_serve(self._serve, str(self.path))
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    async def stop(self) -> None:
        """The daemon goes away: its socket and every connection close."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def calls(self, method: str) -> list[dict[str, Any]]:
        return [r["params"] for r in self.requests if r.get("method") == method]

    async def wait_for(self, method: str, count: int = 1, within: float = 30.0) -> None:
        async with asyncio.timeout(within):
            while len(self.calls(method)) < count:
                self.arrived.clear()
                await self.arrived.wait()

    # --- the thread, as a test drives it ---------------------------------------------------
    async def begin_turn(self) -> str:
        """The user started a turn in the TUI."""
        self.turn_id = f"turn_{next(self._turns)}"
        self.state = "active"
        await self._notify(
            "turn/started", {"threadId": self.thread_id, "turn": {"id": self.turn_id}}
        )
        return self.turn_id

    async def finish_turn(self) -> None:
        turn, self.turn_id, self.state = self.turn_id, None, "idle"
        await self._notify("turn/completed", {"threadId": self.thread_id, "turn": {"id": turn}})

    async def ask_approval(self) -> None:
        self.state = "waiting"
        await self._status({"type": "active", "activeFlags": ["waitingOnApproval"]})

    async def approve(self) -> None:
        self.state = "active"
        await self._status({"type": "active", "activeFlags": []})

    def _status_body(self) -> dict[str, Any]:
        if self.state == "idle":
            return {"type": "idle"}
        flags = ["waitingOnApproval"] if self.state == "waiting" else []
        return {"type": "active", "activeFlags": flags}

    async def _status(self, status: dict[str, Any]) -> None:
        await self._notify("thread/status/changed", {"threadId": self.thread_id, "status": status})

    async def _notify(self, method: str, params: dict[str, Any]) -> None:
        frame = json.dumps({"method": method, "params": params})
        for ws in list(self._clients):
            with contextlib.suppress(ConnectionClosed):
                await ws.send(frame)

    # --- the wire --------------------------------------------------------------------------
    async def _serve(self, ws: ServerConnection) -> None:
        self._clients.add(ws)
        try:
            async for raw in ws:
                message = json.loads(raw)
                self.requests.append(message)
                self.arrived.set()
                if "id" in message:
                    await ws.send(json.dumps(await self._answer(message)))
        except ConnectionClosed:
            pass
        finally:
            self._clients.discard(ws)

    async def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        method, number = message.get("method"), message["id"]
        params = message.get("params") or {}
        if method == "initialize":
            return {"id": number, "result": {"userAgent": "fake-codex/0"}}
        if params.get("threadId") not in (None, self.thread_id):
            return {"id": number, "error": {"code": -32600, "message": "thread not found"}}
        if method == "thread/resume":
            thread = {"id": self.thread_id, "status": self._status_body()}
            return {"id": number, "result": {"thread": thread}}
        if method == "turn/start":
            self.turn_id = f"turn_{next(self._turns)}"
            self.state = "active"
            started = {"threadId": self.thread_id, "turn": {"id": self.turn_id}}
            asyncio.get_running_loop().call_soon(
                lambda: asyncio.ensure_future(self._notify("turn/started", started))
            )
            return {"id": number, "result": {"turn": {"id": self.turn_id}}}
        if method == "turn/steer":
            if self.state != "active" or params.get("expectedTurnId") != self.turn_id:
                return {"id": number, "error": {"code": -32600, "message": "no active turn"}}
            return {"id": number, "result": {"turnId": self.turn_id}}
        return {"id": number, "error": {"code": -32601, "message": f"unknown method {method}"}}
