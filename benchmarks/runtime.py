"""What the agent runtime costs a turn, beside the backend it drives, in one run.

- direct: the scripted MockBackend's `run` called in a loop (the floor: what a turn costs with
  no runtime around it);
- runtime: whole turns through the Orchestrator and AgentRuntime over the same backend, one
  input line at a time (each waits for its `ThreadRunComplete`), and with 50 lines queued at
  once (folded and follow-up runs, as a busy agent sees them);
- idle agents: memory per agent with 100 agents (orchestrator, runtime, one finished turn
  each) waiting for input in one process.

It prints turns per second, the runtime's overhead per turn over the direct call, and KB per
idle agent. Run: `.venv/bin/python benchmarks/runtime.py` (`--turns N`).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent / "src"))

from caucus.models.chat import ChatMessage, Role, user
from caucus.models.tools import NoTools
from caucus.runtime.agent import AgentRuntime
from caucus.runtime.ids import CountingIds, MemoryKV
from caucus.runtime.onstart import Prompt
from caucus.runtime.orchestrator import Orchestrator
from caucus.testing import MockBackend


class Lines:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()

    def __aiter__(self) -> AsyncIterator[str]:
        return self

    async def __anext__(self) -> str:
        line = await self.queue.get()
        if line is None:
            raise StopAsyncIteration
        return line


class Sink:
    async def put(self, message: ChatMessage) -> None:
        return


async def direct(turns: int) -> float:
    backend = MockBackend()
    history = [ChatMessage(Role.SYSTEM, "be brief"), user("hello")]
    sink, tools = Sink(), NoTools()
    start = time.perf_counter()
    for _ in range(turns):
        await backend.run(history, sink, tools)
    return turns / (time.perf_counter() - start)


def agent() -> tuple[Orchestrator, Lines, asyncio.Event, list[int]]:
    runtime = AgentRuntime(MockBackend(), NoTools(), ids=CountingIds(), kv=MemoryKV())
    done = asyncio.Event()
    count = [0]

    def write(event: dict[str, Any]) -> None:
        if event["event"] == "ThreadRunComplete":
            count[0] += 1
            done.set()

    orchestrator = Orchestrator(runtime, name="bench", prompt=Prompt("be brief", None), write=write)
    return orchestrator, Lines(), done, count


async def one_at_a_time(turns: int) -> float:
    orchestrator, lines, done, _ = agent()
    running = asyncio.ensure_future(orchestrator.run(lines))
    start = time.perf_counter()
    for n in range(turns):
        done.clear()
        lines.queue.put_nowait(f"line {n}")
        await done.wait()
    elapsed = time.perf_counter() - start
    lines.queue.put_nowait(None)
    await running
    return turns / elapsed


async def queued(lines_count: int) -> tuple[float, int]:
    orchestrator, lines, _, count = agent()
    start = time.perf_counter()
    for n in range(lines_count):
        lines.queue.put_nowait(f"line {n}")
    lines.queue.put_nowait(None)
    await orchestrator.run(lines)
    return lines_count / (time.perf_counter() - start), count[0]


async def idle(agents: int) -> float:
    """Python memory held per agent (tracemalloc: the process's RSS would hide it in arenas
    that earlier phases left free)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    running = []
    for _ in range(agents):
        orchestrator, lines, done, _ = agent()
        running.append((asyncio.ensure_future(orchestrator.run(lines)), lines))
        lines.queue.put_nowait("hello")
        await done.wait()
    gc.collect()
    per_agent = (tracemalloc.get_traced_memory()[0] - before) / agents / 1024
    tracemalloc.stop()
    for task, lines in running:
        lines.queue.put_nowait(None)
        await task
    return per_agent


async def measure(turns: int) -> dict[str, Any]:
    await one_at_a_time(100)  # warm up
    floor = await direct(turns)
    turned = await one_at_a_time(turns)
    burst, runs = await queued(50)
    kb = await idle(100)
    return {
        "direct_runs_per_s": round(floor, 1),
        "runtime_turns_per_s": round(turned, 1),
        "ratio_to_direct": round(turned / floor, 4),
        "overhead_us_per_turn": round((1 / turned - 1 / floor) * 1e6, 1),
        "queued_lines_per_s": round(burst, 1),
        "queued_runs": runs,
        "idle_agent_kb": round(kb, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000, help="turns per timed phase")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = asyncio.run(measure(args.turns))
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"Caucus agent runtime benchmark ({args.turns} turns, MockBackend, one process)\n")
    print(f"  backend called directly     {figures['direct_runs_per_s']:>10,.0f} runs/s")
    print(
        f"  turns through the runtime   {figures['runtime_turns_per_s']:>10,.0f} turns/s"
        f"   ({figures['ratio_to_direct']:.3f} of direct)"
    )
    print(f"  runtime overhead per turn   {figures['overhead_us_per_turn']:>10,.1f} µs")
    print(
        f"  50 lines queued at once     {figures['queued_lines_per_s']:>10,.0f} lines/s"
        f"   ({figures['queued_runs']} runs: folded and follow-ups)"
    )
    print(f"  memory per idle agent       {figures['idle_agent_kb']:>10,.1f} KB   (100 agents)")


if __name__ == "__main__":
    main()
