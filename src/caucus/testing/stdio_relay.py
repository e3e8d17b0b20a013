"""A stdio MCP server (`caucus bridge`, or any other) behind Streamable HTTP, for tools that
speak only HTTP: the MCP conformance suite, an inspector, a browser host.

Each session is one child process: an `initialize` POSTed without a session starts it and
names the session (`Mcp-Session-Id`); every message POSTed on the session is one line on the
child's stdin, as the child's own host would write it. A request is answered with the child's
response to its id, as a JSON body. What the child says on its own (notifications, requests
to the client) goes to the session's GET stream, which is also where the client's answers to
those requests come back from (POSTed, 202). DELETE ends the child. The relay adds nothing to
what the child says and takes nothing away: a tool checking the relay checks the child.

Like the hub, it binds 127.0.0.1 and answers only requests whose Host names the loopback
(DNS rebinding). `python -m caucus.testing.stdio_relay [--port N] -- caucus bridge` prints the
URL it serves on its first line of output.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import secrets
import socket
import sys
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import IO, Any

import uvicorn
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

SESSION = "mcp-session-id"
MAX_SESSIONS = 16  # children alive at once; the oldest is ended to make room
MAX_QUEUED = 1000  # messages kept for a GET stream that is not open
MAX_LINE = 16 * 1024 * 1024  # the longest line a child may write
ANSWER_WITHIN = 120.0  # seconds a request waits for the child's answer
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
_PARSE_ERROR = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}


class _Child:
    """One session: its process, the answers it owes, what it said unasked."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.unasked: deque[dict[str, Any]] = deque(maxlen=MAX_QUEUED)
        self.said = asyncio.Event()
        self.streaming = False
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not a message (a stray print): a host would drop it too
            if not isinstance(message, dict):
                continue
            key = _key(message.get("id"))
            answer = "result" in message or "error" in message
            waiting = self.pending.pop(key, None) if answer else None
            if waiting is not None and not waiting.done():
                waiting.set_result(message)
            else:
                self.unasked.append(message)
                self.said.set()
        for waiting in self.pending.values():  # the child is gone: nothing more comes
            if not waiting.done():
                waiting.set_exception(ConnectionError("the server process ended"))
        self.said.set()

    async def send(self, message: object) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        await stdin.drain()

    async def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        answered = asyncio.get_running_loop().create_future()
        self.pending[_key(message["id"])] = answered
        await self.send(message)
        return await asyncio.wait_for(answered, ANSWER_WITHIN)

    async def end(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.terminate()
        try:
            await asyncio.wait_for(self.process.wait(), 5)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()
        self.reader.cancel()


def _key(request_id: object) -> str:
    return json.dumps(request_id)


class StdioRelay:
    """The ASGI app: Streamable HTTP in front, one `command` child per session behind."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        stderr: IO[bytes] | None = None,
    ) -> None:
        self.command = list(command)
        self._env = dict(env) if env is not None else None
        self._stderr = stderr
        self.sessions: dict[str, _Child] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        response = await self._answer(request)
        await response(scope, receive, send)

    async def _answer(self, request: Request) -> Response:
        host = request.headers.get("host", "").rsplit(":", 1)[0]
        if host not in LOOPBACK_HOSTS:
            return _error(421, -32600, "the relay answers only on the loopback")
        if request.method == "POST":
            return await self._post(request)
        child = self.sessions.get(request.headers.get(SESSION, ""))
        if request.method not in ("GET", "DELETE"):
            return _error(405, -32600, "POST, GET or DELETE")
        if child is None:
            return _error(404, -32600, "no such session")
        if request.method == "DELETE":
            del self.sessions[request.headers[SESSION]]
            await child.end()
            return Response(status_code=200)
        if child.streaming:
            return _error(409, -32600, "the session's stream is already open")
        return StreamingResponse(_stream(child), media_type="text/event-stream")

    async def _post(self, request: Request) -> Response:
        try:
            message = json.loads(await request.body())
        except ValueError:
            return JSONResponse(_PARSE_ERROR, status_code=400)
        if not isinstance(message, dict):
            return _error(400, -32600, "one JSON-RPC message per request")
        session_id = request.headers.get(SESSION)
        headers: dict[str, str] = {}
        if session_id is None:
            if message.get("method") != "initialize":
                return _error(400, -32600, "no session: initialize first")
            session_id = await self._start()
            headers[SESSION] = session_id
        child = self.sessions.get(session_id)
        if child is None:
            return _error(404, -32600, "no such session")
        try:
            if "method" not in message or "id" not in message:
                await child.send(message)  # a notification, or an answer to the child's request
                return Response(status_code=202, headers=headers)
            answer = await child.ask(message)
        except (ConnectionError, TimeoutError) as exc:
            return _error(502, -32603, f"the server did not answer: {exc}", message.get("id"))
        return JSONResponse(answer, headers=headers)

    async def _start(self) -> str:
        while len(self.sessions) >= MAX_SESSIONS:
            oldest = next(iter(self.sessions))
            await self.sessions.pop(oldest).end()
        process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr,
            env=self._env,
            limit=MAX_LINE,
        )
        session_id = secrets.token_hex(16)
        self.sessions[session_id] = _Child(process)
        return session_id

    async def close(self) -> None:
        children = list(self.sessions.values())
        self.sessions.clear()
        await asyncio.gather(*(child.end() for child in children))


async def _stream(child: _Child) -> AsyncIterator[bytes]:
    child.streaming = True
    try:
        while True:
            while child.unasked:
                message = child.unasked.popleft()
                yield b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n"
            if child.reader.done():
                return
            child.said.clear()
            await child.said.wait()
    finally:
        child.streaming = False


def _error(status: int, code: int, message: str, request_id: object = None) -> Response:
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status)


@asynccontextmanager
async def relay(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stderr: IO[bytes] | None = None,
) -> AsyncIterator[str]:
    """Serve `command` behind Streamable HTTP on 127.0.0.1 and an ephemeral port, in the
    running event loop; yields the endpoint's URL (`…/mcp`). Each session's child runs with
    `env` (default: this process's) and writes its stderr to `stderr` (default: inherited)."""
    from caucus.testing import serve_app

    app = StdioRelay(command, env=env, stderr=stderr)

    def config(served: Any) -> uvicorn.Config:
        return uvicorn.Config(served, log_level="warning", access_log=False, lifespan="off")

    try:
        async with serve_app(config, app) as url:
            yield f"{url}/mcp"
    finally:
        await app.close()


async def _main(command: list[str], port: int) -> None:
    app = StdioRelay(command)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        await app.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m caucus.testing.stdio_relay",
        description="Serve a stdio MCP server over Streamable HTTP on 127.0.0.1.",
    )
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("command", nargs="+", help="the server's command, after --")
    args = parser.parse_args(argv)
    asyncio.run(_main(args.command, args.port))


if __name__ == "__main__":
    main(sys.argv[1:])
