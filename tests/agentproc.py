"""A `caucus agent` process as the tests drive it: NDJSON events read off its stdout, in its
own process group so that everything it starts (an MCP stdio server) ends with it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Callable
from typing import Any, ClassVar

from tests import waiting
from tests.processes import describe_exit


class AgentProcess:
    started: ClassVar[list[AgentProcess]] = []  # every one: a failed test leaves none running

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.events: list[dict[str, Any]] = []
        AgentProcess.started.append(self)

    async def say(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        await self.proc.stdin.drain()

    async def until(
        self,
        kind: str,
        count: int = 1,
        within: float = 30,
        where: Callable[[dict[str, Any]], bool] | None = None,
    ) -> dict[str, Any]:
        """Read events (`within` s at most, scaled) until the `count`-th event of `kind` (that
        `where` accepts, if given)."""
        assert self.proc.stdout is not None
        stdout = self.proc.stdout

        def matching() -> list[dict[str, Any]]:
            return [e for e in self.events if e["event"] == kind and (where is None or where(e))]

        async def read() -> None:
            while len(matching()) < count:
                line = await stdout.readline()
                if not line:
                    await self.proc.wait()
                    err = await self.proc.stderr.read() if self.proc.stderr else b""
                    raise AssertionError(
                        f"the agent ended ({describe_exit(self.proc.returncode or 0)}) before "
                        f"{kind} #{count}; its stderr ends:\n{err.decode()[-3000:]}"
                    )
                self.events.append(json.loads(line))

        try:
            await waiting.within(read(), within, f"{kind} #{count} from the agent")
        except AssertionError as exc:
            # What the agent did say is what a failure on a loaded machine is read by.
            seen = "\n".join(json.dumps(e)[:300] for e in self.events[-15:])
            raise AssertionError(f"{exc}; its last events:\n{seen}") from None
        return matching()[count - 1]

    async def finish(self, within: float = 30) -> tuple[int, str]:
        """Close stdin (if it is ours) and wait for the end: (exit status, stderr)."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        out, err = await waiting.within(self.proc.communicate(), within, "the agent to end")
        self.events += [json.loads(line) for line in out.decode().splitlines()]
        assert self.proc.returncode is not None
        return self.proc.returncode, err.decode()

    async def reap(self) -> None:
        """Kill it and everything it started (its own process group), if it still runs."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            await self.proc.wait()
