"""100 native agents on one hub, in one process, beside 100 plain echo clients in the same run.

A `caucus hub` process (SQLite) and, in this process:
- baseline: 100 plain `HubClient` loops that receive a message and send it back (no runtime);
- agents: 100 native agents (the orchestrator, the runtime, the hub connector with the room's
  tools, on a scripted MockBackend that echoes) doing the same through whole turns.

A driver keeps one message in flight to each echoer (closed loop) and counts answers per
second. Then the operator interrupts agents in the middle of a long run: the time from the
interrupt to the run's end (p50/p99). Last, the memory each idle agent holds (tracemalloc).
Run: `.venv/bin/python benchmarks/agents.py` (`--agents N --duration S`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "src"))

import relay
from caucus.client import HubClient
from caucus.errors import CaucusError
from caucus.mcp.identity import IdentityStore
from caucus.models.chat import ChatMessage, Role, assistant
from caucus.models.mcp_tools import McpTools
from caucus.models.seam import MessageSink, RunOutcome
from caucus.models.tools import ToolExecutor, ToolObserver
from caucus.operator_client import OperatorClient
from caucus.runtime.agent import AgentRuntime
from caucus.runtime.connectors.hub import HIDDEN_TOOLS, HubConnector
from caucus.runtime.ids import CountingIds, MemoryKV
from caucus.runtime.onstart import Prompt
from caucus.runtime.orchestrator import Orchestrator

ENV = {
    **dict.fromkeys(("CAUCUS_SEND_RATE_CAPACITY", "CAUCUS_SEND_RATE_REFILL"), "1000000"),
    **dict.fromkeys(("CAUCUS_REGISTER_RATE_CAPACITY", "CAUCUS_RESUME_RATE_CAPACITY"), "1000000"),
    "CAUCUS_STATUS_RATE_CAPACITY": "1000000",
    "CAUCUS_STATUS_RATE_REFILL": "1000000",
    "CAUCUS_STRANGER_RATE": "1000000",
    "CAUCUS_STRANGER_BURST": "1000000",
    "CAUCUS_PEERS_MAX": "10000",
    "CAUCUS_LOG_LEVEL": "warning",
}


class Echo:
    """The agents' model: answers with the message's last line, or stalls on 'stall'."""

    async def run(
        self,
        history: Sequence[ChatMessage],
        sink: MessageSink,
        tools: ToolExecutor,
        observer: ToolObserver | None = None,
    ) -> RunOutcome:
        await tools.list_tools()  # as a real backend does at the start of every run
        last = next(m.content for m in reversed(history) if m.role is Role.USER)
        if "stall" in last:
            await asyncio.sleep(3600)
        text = "echo " + last.rsplit("\n", 2)[-2] if "\n" in last else "echo"
        await sink.put(assistant(text))
        return RunOutcome(text)

    async def close(self) -> None:
        return


class Agent:
    def __init__(self, url: str, name: str, state: Path) -> None:
        self.name = name
        self.connector = HubConnector(
            url, name, identities=IdentityStore(url, state), loop_limit=10**9, poll_timeout=20
        )
        self.tools = McpTools()
        self.interrupted = asyncio.Event()
        self.running = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.connector.open()
        await self.tools.attach("caucus", self.connector.hub_tools(), hidden=HIDDEN_TOOLS)
        runtime = AgentRuntime(Echo(), self.tools, ids=CountingIds(), kv=MemoryKV())

        def write(event: dict[str, Any]) -> None:
            self.connector.observe(event)
            if event["event"] == "ThreadRunInterrupted":
                self.interrupted.set()
            elif event["event"] == "NewThreadRunCreated":
                self.running.set()

        orchestrator = Orchestrator(
            runtime, name=self.name, prompt=Prompt("echo", None), write=write
        )
        self.notices = self.connector.notices()
        self.task = asyncio.ensure_future(orchestrator.run(_never(), self.notices))

    async def stop(self) -> None:
        """As `caucus agent` ends: the reactor, then the poller, then the tools, then goodbye."""
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            await self.notices.aclose()  # type: ignore[attr-defined]
        await self.tools.close()
        await self.connector.close()


async def _never() -> AsyncIterator[str]:
    await asyncio.Event().wait()
    yield ""


async def plain_echo(url: str, name: str, stop: asyncio.Event) -> None:
    async with HubClient(url) as client:
        await client.register(name)
        while not stop.is_set():
            batch = await client.receive(timeout=1)
            for m in batch.messages:
                with contextlib.suppress(CaucusError):  # the driver has left
                    await client.send(m.sender, "echo " + m.content)


async def drive(url: str, names: list[str], duration: float, run: str) -> float:
    """One message in flight per echoer for `duration` seconds: answers per second."""
    async with HubClient(url) as driver:
        await driver.register(f"driver-{run}")
        for n in names:
            await driver.send(n, f"{n} 0")
        answered = 0
        start = time.perf_counter()
        while time.perf_counter() - start < duration:
            batch = await driver.receive(timeout=1)
            for m in batch.messages:
                answered += 1
                await driver.send(m.sender, f"{m.sender} {answered}")
        rate = answered / (time.perf_counter() - start)
        await driver.leave()
        return rate


async def interrupts(url: str, token: str, agents: list[Agent], samples: int) -> list[float]:
    lat: list[float] = []
    async with HubClient(url) as sender, OperatorClient(url, token=token) as operator:
        await sender.register("staller")
        for i in range(samples):
            agent = agents[i % len(agents)]
            agent.interrupted.clear()
            agent.running.clear()
            await sender.send(agent.name, "please stall")
            await asyncio.wait_for(agent.running.wait(), 30)
            t0 = time.perf_counter()
            await operator.interrupt(agent.name)
            await asyncio.wait_for(agent.interrupted.wait(), 30)
            lat.append((time.perf_counter() - t0) * 1000)
    return lat


async def measure(url: str, token: str, args: argparse.Namespace, state: Path) -> dict[str, Any]:
    stop = asyncio.Event()
    plain = [f"plain-{i}" for i in range(args.agents)]
    echoers = [asyncio.ensure_future(plain_echo(url, n, stop)) for n in plain]
    await asyncio.sleep(1.0)  # registered and parked
    baseline = await drive(url, plain, args.duration, "plain")
    stop.set()
    await asyncio.gather(*echoers)

    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    agents = [Agent(url, f"agent-{i}", state) for i in range(args.agents)]
    for a in agents:
        await a.start()
    await asyncio.sleep(1.0)
    gc.collect()
    per_agent_kb = (tracemalloc.get_traced_memory()[0] - before) / args.agents / 1024
    tracemalloc.stop()
    through = await drive(url, [a.name for a in agents], args.duration, "agents")
    lat = sorted(await interrupts(url, token, agents, args.interrupts))
    for a in reversed(agents):  # the tools' MCP clients were entered in this task: LIFO
        await a.stop()
    return {
        "agents": args.agents,
        "plain_echo_msgs_per_s": round(baseline, 1),
        "agent_msgs_per_s": round(through, 1),
        "ratio_to_plain": round(through / baseline, 3),
        "interrupt_p50_ms": round(lat[len(lat) // 2], 2),
        "interrupt_p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))], 2),
        "memory_per_agent_kb": round(per_agent_kb, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    parser.add_argument("--interrupts", type=int, default=50, help="interrupt samples")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # replies to a driver that left are expected
    tmp = Path(tempfile.mkdtemp(prefix="caucus-agents-"))
    cmd = [sys.executable, "-m", "caucus", "hub", "--port", "0", "--json"]
    cmd += ["--db", str(tmp / "hub.db")]
    proc, url = relay.start(cmd, {**ENV, "CAUCUS_HOME": str(tmp)})
    try:
        token = (tmp / "operator-token").read_text().strip()
        figures = asyncio.run(measure(url, token, args, tmp / "state"))
    finally:
        relay.stop(proc)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"Caucus native agents benchmark ({args.agents} agents in one process, one hub)\n")
    print(f"  plain echo clients        {figures['plain_echo_msgs_per_s']:>9,.0f} msgs/s")
    print(
        f"  native agents (MockBackend){figures['agent_msgs_per_s']:>8,.0f} msgs/s"
        f"   ({figures['ratio_to_plain']:.2f} of plain)"
    )
    print(
        f"  interrupt -> run ended     p50 {figures['interrupt_p50_ms']:.1f} ms"
        f"   p99 {figures['interrupt_p99_ms']:.1f} ms   ({args.interrupts} samples)"
    )
    print(f"  memory per agent          {figures['memory_per_agent_kb']:>9,.1f} KB")


if __name__ == "__main__":
    main()
