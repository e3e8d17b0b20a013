"""The native agent's composition root, as `server.py` is the hub's: from its options, the
backend, the tools and their approval gate, the hub and IRC connectors, the watches and the
session log, wired around one runtime and run until the agent is told to end."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import signal

    from caucus.models.seam import AgentBackend
    from caucus.runtime.builder import AgentBuilder
    from caucus.runtime.onstart import Prompt
    from caucus.runtime.tools.approval import Policy

log = logging.getLogger("caucus.agent")


class StartupError(Exception):
    """The agent cannot start; the message is one line saying what to do."""


@dataclass(frozen=True, slots=True)
class Options:
    name: str
    prompt: Prompt
    max_turns: int | None
    servers: list[str]
    session_log: Path | None
    model: str
    hub: str | None
    skills: list[str] | None
    description: str | None
    agent_key: str | None
    loop_limit: int
    watch_state: Path | None
    policy: Policy
    unattended: bool
    approve_timeout: float
    code_mode: bool
    irc: tuple[str, int] | None
    nick: str
    channels: list[str]
    mention_only: bool
    stdin: bool


def make_backend(
    kind: str,
    *,
    model: str | None,
    base_url: str,
    claude: str,
    api_key: str | None,
    start_with_tool: str | None,
    temperature: float | None,
    servers: list[str],
) -> tuple[AgentBackend, list[str]]:
    """The backend named `kind` ("openai", "claude-cli", "mock"), and the MCP servers the
    agent itself still starts: Claude Code starts and calls its own."""
    if kind == "mock":
        from caucus.runtime.backends.mock import MockBackend

        return MockBackend(), servers
    if kind == "claude-cli":
        from caucus.runtime.backends.claude_cli import ClaudeCliBackend

        return ClaudeCliBackend(command=claude, model=model, mcp_servers=servers), []
    from caucus.models.openai_compat import OpenAIBackend

    if model is None:
        raise StartupError("an openai backend needs a model: the model's name on the server")
    backend = OpenAIBackend(
        model=model,
        base_url=base_url,
        api_key=api_key,
        start_with_tool=start_with_tool,
        temperature=temperature,
    )
    return backend, servers


async def run_agent(backend: AgentBackend, options: Options) -> int:
    """Build the agent (`runtime/builder.py`), run it until it is told to end, close it.
    Asked to end (SIGTERM, SIGINT) once running, it stops as the operator's stop does (the run
    under way finishes first); while still starting, the start-up is abandoned and the agent
    leaves. Either way the exit is 0."""
    import asyncio

    from caucus.runtime.builder import AgentBuilder

    builder = AgentBuilder(backend, options)
    signals = _Signals(builder)
    try:
        await builder.build()
        orchestrator = builder.orchestrator()
        signals.running()
        await builder.run(orchestrator)
    except asyncio.CancelledError:
        if not signals.stopped_early:
            raise
        # The cancel was ours and is handled: without this the task stays "cancelling", and
        # the first cancel scope the clean-up enters (closing an MCP server) cancels it again.
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
        log.info("asked to end (%s) while starting: leaving", signals.stopped_early[0])
    finally:
        await builder.close()
    return 0


class _Signals:
    """SIGTERM and SIGINT for a starting agent (abandon the start-up) and a running one (the
    operator's stop, on its notices)."""

    def __init__(self, builder: AgentBuilder) -> None:
        import asyncio
        import contextlib
        import signal

        self._notices = builder.notices
        self._starting = asyncio.current_task()
        self.stopped_early: list[str] = []
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._asked_to_end, sig)

    def running(self) -> None:
        self._starting = None

    def _asked_to_end(self, sig: signal.Signals) -> None:
        from caucus.runtime.orchestrator import Control

        if self._starting is None:
            self._notices.put(Control("stop", sig.name))
        else:
            self.stopped_early.append(sig.name)
            self._starting.cancel()
            self._starting = None  # a second signal does not cut the leaving short
