"""MCP beside plain HTTP on the same hub, in one run: delivery latency and a call's overhead.

Starts `caucus hub` (a fresh SQLite file) and measures, one message at a time (so each figure
is a latency, not a queue), through three doors:

- HTTP: `POST /send` and a parked `GET /receive`, from a lean keep-alive client;
- MCP: `say` and a parked `listen` on `/mcp` (a handshake-era session each), from a lean
  keep-alive client writing the JSON-RPC itself: the hub's MCP door and nothing else;
- MCP through the official MCP SDK client (`mcp.Client`): the same door, with the SDK
  client's own work on top, as a Python host would pay it.

For each: delivery (a receiver parked, a sender sends, until the receiver has the message)
and a send's round trip (the same service call through each door). The doors take turns, one
message each, so a shared machine's drift moves all of them alike. Beside them the hub's own
CPU per message (user + system, /proc, all its threads) while each door's turns ran.

Issue 33's targets, on the hub's doors (the lean clients, so the two sides differ only in
the hub): MCP delivery p50 <= 1.3x HTTP's; `tools/call say`'s overhead over `POST /send`
<= 1 ms p50. The SDK client's figures show what a client library adds on top; the hub
cannot remove that. Run: `.venv/bin/python benchmarks/mcp_path.py` (`--count N`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import relay

TARGET_DELIVERY_RATIO = 1.3
TARGET_CALL_OVERHEAD_MS = 1.0


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


Samples = AsyncGenerator[
    tuple[float, float], bool | None
]  # sent True: stop  # (delivery ms, send round trip ms), one a step


async def http_door(url: str, tag: str) -> Samples:
    """Plain HTTP: `POST /send`, a parked `GET /receive`."""
    host, port = relay.host_port(url)
    sender = await relay.Conn(host, port, await relay.register(url, f"http-s{tag}")).open()
    receiver = await relay.Conn(host, port, await relay.register(url, f"http-r{tag}")).open()
    ack = None
    for n in itertools.count():
        path = "/receive?timeout=10" + (f"&ack={ack}" if ack is not None else "")
        parked = asyncio.ensure_future(receiver.request("GET", path))
        await asyncio.sleep(0.002)  # the receive parks before the send, as in the MCP run
        body = json.dumps({"to": f"http-r{tag}", "content": f"m{n}"}).encode()
        started = time.perf_counter()
        status, _ = await sender.request("POST", "/send", body)
        call = (time.perf_counter() - started) * 1000
        assert status == 200
        status, data = await parked
        delivery = (time.perf_counter() - started) * 1000
        messages = json.loads(data)["messages"]
        assert [m["content"] for m in messages] == [f"m{n}"], messages
        ack = messages[-1]["seq"]
        if (yield delivery, call):
            break
    sender.close()
    receiver.close()


class McpConn(relay.Conn):
    """A handshake-era `/mcp` session over one keep-alive connection, JSON-RPC by hand, its
    request head and its reading of an answer's head as lean as `relay.Conn`'s (the two doors
    then differ only in the hub)."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(host, port)
        self._host = f"{host}:{port}".encode()
        self._head = b""
        self.headers = {"Accept": "application/json, text/event-stream"}

    @property
    def headers(self) -> dict[str, str]:
        return self._headers

    @headers.setter
    def headers(self, value: dict[str, str]) -> None:
        self._headers = value
        self._head = "".join(f"{k}: {v}\r\n" for k, v in value.items()).encode()

    async def post(
        self, message: dict[str, Any], extra: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        body = json.dumps(message).encode()
        head = self._head
        if extra:
            head += "".join(f"{k}: {v}\r\n" for k, v in extra.items()).encode()
        self.writer.write(
            b"POST /mcp HTTP/1.1\r\nHost: %b\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n%b\r\n%b" % (self._host, len(body), head, body)
        )
        status = int((await self.reader.readline())[9:12])
        length, chunked = 0, False
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name = line[:15].lower()
            if name == b"content-length:":
                length = int(line[15:])
            elif name == b"transfer-encodi":
                chunked = line.rstrip().lower().endswith(b"chunked")
            elif name == b"mcp-session-id:":
                value = line[15:].strip().decode("latin-1")
                if self.headers.get("Mcp-Session-Id") != value:
                    self.headers = {**self.headers, "Mcp-Session-Id": value}
        if not chunked:
            return status, await self.reader.readexactly(length)
        data = b""
        while size := int((await self.reader.readline()).strip(), 16):
            data += await self.reader.readexactly(size)
            await self.reader.readline()
        await self.reader.readline()
        return status, data

    async def call(self, number: int, tool: str, **args: object) -> dict[str, Any]:
        message = rpc(number, "tools/call", self.params(tool, args))
        status, data = await self.post(message, self.routing(tool))
        assert status == 200, data
        if data.startswith(b"{"):
            reply = json.loads(data)
        else:  # an SSE stream: its one event
            reply = json.loads(next(x[6:] for x in data.splitlines() if x.startswith(b"data: ")))
        result: dict[str, Any] = reply["result"]
        assert not result["isError"], result
        content: dict[str, Any] = result["structuredContent"]
        return content

    def params(self, tool: str, args: dict[str, object]) -> dict[str, Any]:
        return {"name": tool, "arguments": args}

    def routing(self, tool: str) -> dict[str, str]:
        """Headers a call carries beside its session's."""
        return {}

    async def open_session(self, name: str) -> McpConn:
        await self.open()
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        status, _ = await self.post(rpc(0, "initialize", init))
        assert status == 200
        self.headers = {**self.headers, "Mcp-Protocol-Version": "2025-11-25"}
        status, _ = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert status == 202
        await self.call(1, "join", name=name)
        return self


class ModernConn(McpConn):
    """The 2026-07-28 era: no session; every request carries its envelope, and the tools the
    state handle `join` returned."""

    MODERN = "2026-07-28"

    def __init__(self, host: str, port: int) -> None:
        super().__init__(host, port)
        self.headers |= {"Mcp-Protocol-Version": self.MODERN, "Mcp-Method": "tools/call"}
        self.handle: str | None = None

    def params(self, tool: str, args: dict[str, object]) -> dict[str, Any]:
        meta = {
            "io.modelcontextprotocol/protocolVersion": self.MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        if self.handle is not None:
            args = {**args, "handle": self.handle}
        return {"name": tool, "arguments": args, "_meta": meta}

    def routing(self, tool: str) -> dict[str, str]:
        return {"Mcp-Name": tool}

    async def open_session(self, name: str) -> McpConn:
        await self.open()
        self.handle = (await self.call(1, "join", name=name))["handle"]
        return self


def rpc(number: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": method, "params": params}


async def mcp_door(url: str, tag: str, era: type[McpConn] = McpConn) -> Samples:
    """`/mcp` from a lean JSON-RPC client: `say`, a parked `listen`."""
    host, port = relay.host_port(url)
    sender = await era(host, port).open_session(f"lean-s{tag}")
    receiver = await era(host, port).open_session(f"lean-r{tag}")
    for n in itertools.count():
        parked = asyncio.ensure_future(receiver.call(2 + n, "listen", timeout=10))
        await asyncio.sleep(0.002)  # the listen parks before the say
        started = time.perf_counter()
        await sender.call(2 + n, "say", to=f"lean-r{tag}", content=f"m{n}")
        call = (time.perf_counter() - started) * 1000
        got = await parked
        delivery = (time.perf_counter() - started) * 1000
        assert [m["content"] for m in got["messages"]] == [f"m{n}"], got
        if (yield delivery, call):
            break
    sender.close()
    receiver.close()


async def sdk_door(url: str, tag: str) -> Samples:
    """`/mcp` through the official MCP SDK client."""
    from mcp import Client

    async def call(client: Any, tool: str, **args: object) -> dict[str, Any]:
        result = await client.call_tool(tool, dict(args))
        assert not result.is_error, result
        content: dict[str, Any] = result.structured_content
        return content

    async with (
        Client(f"{url}/mcp", mode="legacy") as sender,
        Client(f"{url}/mcp", mode="legacy") as receiver,
    ):
        await call(sender, "join", name=f"mcp-s{tag}")
        await call(receiver, "join", name=f"mcp-r{tag}")
        for n in itertools.count():
            parked = asyncio.ensure_future(call(receiver, "listen", timeout=10))
            await asyncio.sleep(0.002)
            started = time.perf_counter()
            await call(sender, "say", to=f"mcp-r{tag}", content=f"m{n}")
            said = (time.perf_counter() - started) * 1000
            got = await parked
            delivery = (time.perf_counter() - started) * 1000
            assert [m["content"] for m in got["messages"]] == [f"m{n}"], got
            if (yield delivery, said):
                break


async def modern_door(url: str, tag: str) -> Samples:
    """`/mcp` in the 2026-07-28 era (no session, the handle in every call), lean client."""
    samples = mcp_door(url, tag, ModernConn)
    sample = await anext(samples)
    while not (yield sample):
        sample = await anext(samples)
    with contextlib.suppress(StopAsyncIteration):
        await samples.asend(True)


DOORS: dict[str, Callable[[str, str], Samples]] = {
    "http": http_door,
    "mcp": mcp_door,
    "modern": modern_door,
    "sdk": sdk_door,
}


async def measure(
    url: str, count: int, pid: int
) -> tuple[dict[str, list[float]], dict[str, float], dict[str, float]]:
    """The latencies through each door, and the CPU per message (µs) in each of the hub and
    of this process (the clients). The doors take turns, one message each, so a shared
    machine's drift lands on all of them alike."""
    doors = {name: door(url, name) for name, door in DOORS.items()}
    found: dict[str, list[float]] = {f"{d}_{k}": [] for d in DOORS for k in ("delivery", "call")}
    hub_cpu = dict.fromkeys(DOORS, 0.0)
    own_cpu = dict.fromkeys(DOORS, 0.0)
    me = os.getpid()
    try:
        for n in range(count + 5):  # the first five of each warm it up
            for name, samples in doors.items():
                hub_before, own_before = relay.process_cpu(pid), relay.process_cpu(me)
                delivery, call = await anext(samples)
                if n >= 5:
                    hub_cpu[name] += relay.process_cpu(pid) - hub_before
                    own_cpu[name] += relay.process_cpu(me) - own_before
                    found[f"{name}_delivery"].append(delivery)
                    found[f"{name}_call"].append(call)
    finally:
        for samples in doors.values():  # each door ends its loop and closes what it opened
            with contextlib.suppress(StopAsyncIteration):
                await samples.asend(True)
    per = {name: spent / count * 1e6 for name, spent in hub_cpu.items()}
    return found, per, {name: spent / count * 1e6 for name, spent in own_cpu.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300, help="messages through each door")
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="caucus-bench-"))
    env = {**relay.BENCH_ENV, "CAUCUS_HOME": str(tmp)}
    hub, url = relay.start(relay.hub_command(tmp / "bench.db"), env)
    try:
        found, cpu, client_cpu = asyncio.run(measure(url, args.count, hub.pid))
    finally:
        relay.stop(hub)
        shutil.rmtree(tmp, ignore_errors=True)  # the hub's folder: its database, its token
    figures = {f"{k}_{p}_ms": round(pct(v, p), 2) for k, v in found.items() for p in (50, 99)}
    p50 = {k: statistics.median(v) for k, v in found.items()}
    ratio = p50["mcp_delivery"] / p50["http_delivery"]
    overhead = p50["mcp_call"] - p50["http_call"]
    figures |= {"delivery_ratio": round(ratio, 2), "call_overhead_ms": round(overhead, 2)}
    figures |= {
        "modern_delivery_ratio": round(p50["modern_delivery"] / p50["http_delivery"], 2),
        "modern_call_overhead_ms": round(p50["modern_call"] - p50["http_call"], 2),
        "sdk_delivery_ratio": round(p50["sdk_delivery"] / p50["http_delivery"], 2),
        "sdk_call_overhead_ms": round(p50["sdk_call"] - p50["http_call"], 2),
    }
    figures |= {f"{door}_hub_cpu_us": round(us) for door, us in cpu.items()}
    figures |= {f"{door}_client_cpu_us": round(us) for door, us in client_cpu.items()}
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"\nMCP beside HTTP on one hub ({args.count} messages each, one at a time)\n")
    doors = {"http": "HTTP", "mcp": "MCP", "modern": "MCP 2026-07-28", "sdk": "MCP, SDK client"}
    for door, label in doors.items():
        print(
            f"  {label:15}  delivery p50 {figures[f'{door}_delivery_50_ms']:6.2f} ms  "
            f"p99 {figures[f'{door}_delivery_99_ms']:6.2f}   "
            f"send p50 {figures[f'{door}_call_50_ms']:6.2f} ms  "
            f"p99 {figures[f'{door}_call_99_ms']:6.2f}   CPU: hub {cpu[door]:5.0f}, "
            f"client {client_cpu[door]:5.0f} us/msg"
        )
    print(
        "\n  (a lean keep-alive client on HTTP and MCP, so the two differ only in the hub; "
        "the\n  SDK client's row adds its own work. CPU: a send or say with its receive or "
        "listen,\n  all the hub's threads; the client's, this process's.)\n"
    )
    print(f"  MCP/HTTP delivery p50   {ratio:6.2f}x   target <= {TARGET_DELIVERY_RATIO}x")
    print(
        f"  tools/call overhead p50 {overhead:6.2f} ms  target <= {TARGET_CALL_OVERHEAD_MS} ms"
        " (say over POST /send)"
    )
    print(
        f"  2026-07-28 era          {figures['modern_delivery_ratio']:6.2f}x, "
        f"{figures['modern_call_overhead_ms']:.2f} ms (no session: the handle in every call)"
    )
    print(
        f"  with the SDK client     {figures['sdk_delivery_ratio']:6.2f}x, "
        f"{figures['sdk_call_overhead_ms']:.2f} ms (the client library's own work included)"
    )
    ok = ratio <= TARGET_DELIVERY_RATIO and overhead <= TARGET_CALL_OVERHEAD_MS
    print(f"\n{'within' if ok else 'OUTSIDE'} targets")


if __name__ == "__main__":
    main()
