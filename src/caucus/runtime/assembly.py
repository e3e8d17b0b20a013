"""The native agent's composition root, as `server.py` is the hub's: from its options, the
backend, the tools and their approval gate, the hub and IRC connectors, the watches and the
session log, wired around one runtime and run until the agent is told to end."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from caucus.models.seam import AgentBackend
    from caucus.runtime.onstart import Prompt
    from caucus.runtime.session.logger import SessionLogger
    from caucus.runtime.tools.approval import Policy

log = logging.getLogger("caucus.agent")


class StartupError(Exception):
    """The agent cannot start; the message is one line saying what to do."""


def _session_logger(folder: Path, model: str) -> SessionLogger:
    from caucus.runtime.session.claude import ClaudeSessionHarness, project_folder
    from caucus.runtime.session.logger import SessionLogger
    from caucus.runtime.session.transcript import TranscriptHarness

    try:
        transcript = TranscriptHarness(folder)
        claude = ClaudeSessionHarness(folder, model=model)
    except OSError as exc:
        raise StartupError(f"cannot write the session log in {folder}: {exc}") from None
    logger = SessionLogger([transcript, claude])
    logger.start()
    log.info(
        "session log: %s and %s (to open it in Claude Code, put it in %s and run "
        "`claude --resume %s` in this directory)",
        transcript.path,
        claude.path,
        project_folder(os.getcwd()),
        claude.session_id,
    )
    return logger


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
    import asyncio
    import contextlib
    import signal

    from caucus.models.mcp_tools import McpTools, ToolServerError
    from caucus.models.openai_compat import OpenAIBackend
    from caucus.models.seam import BackendError
    from caucus.models.tools import ToolExecutor
    from caucus.runtime.agent import AgentRuntime
    from caucus.runtime.backends.claude_cli import ClaudeCliBackend
    from caucus.runtime.connectors.hub import HIDDEN_TOOLS, ConnectorError, HubConnector
    from caucus.runtime.connectors.irc import IrcConnector, IrcError
    from caucus.runtime.events import Event, record
    from caucus.runtime.ids import MemoryKV, RandomIds
    from caucus.runtime.orchestrator import Control, Notice, NoticeQueue, Orchestrator
    from caucus.runtime.stdio import EventWriter, stdin_lines
    from caucus.runtime.tools.approval import ApprovalTools, Approver, NobodyToAsk, Unattended
    from caucus.runtime.tools.codemode import CodeModeTools
    from caucus.runtime.tools.resources import ResourceTools, WatchManager

    tools = McpTools()
    connector: HubConnector | None = None
    closing: list[Callable[[], Awaitable[None]]] = []
    notices = NoticeQueue()
    starting = asyncio.current_task()
    stopped_early: list[str] = []

    def asked_to_end(sig: signal.Signals) -> None:
        # Asked to end: once running, as the operator's stop (the run under way finishes
        # first); while still starting, the start-up is abandoned and the agent leaves. Either
        # way the exit is 0, even when the stop comes right after it joined.
        nonlocal starting
        if starting is None:
            notices.put(Control("stop", sig.name))
        else:
            stopped_early.append(sig.name)
            starting.cancel()
            starting = None  # a second signal does not cut the leaving short

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, asked_to_end, sig)
    try:
        if isinstance(backend, OpenAIBackend | ClaudeCliBackend):
            try:
                await backend.check()
            except BackendError as exc:
                raise StartupError(str(exc)) from None
        if options.hub is not None:
            connector = HubConnector(
                options.hub,
                options.name,
                skills=options.skills,
                description=options.description,
                agent_key=options.agent_key,
                loop_limit=options.loop_limit,
                approve_timeout=options.approve_timeout,
            )
            try:
                await connector.open()
            except ConnectorError as exc:
                raise StartupError(str(exc)) from None
            if isinstance(backend, ClaudeCliBackend):
                log.warning("with --backend claude-cli the room's tools are not offered")
            else:
                await tools.attach("caucus", connector.hub_tools(), hidden=HIDDEN_TOOLS, room=True)
        try:
            await tools.start_stdio(options.servers)
        except ToolServerError as exc:
            raise StartupError(str(exc)) from None
        executor: ToolExecutor = tools
        watches: WatchManager | None = None
        if options.servers:
            watches = WatchManager(tools, notices.put, state=options.watch_state)
            executor = ResourceTools(tools, watches)
            restored = await watches.restore()
            if restored is not None:  # folded into the On Start turn
                notices.put(Notice("watch-state", restored))
            await watches.follow_inboxes()  # a server joined already offers its inbox
        if connector is not None:
            notices.pump(connector.notices())
        # Calls that may change things wait for the operator's approval of that exact call.
        approver: Approver = (
            connector
            if connector is not None
            else Unattended()
            if options.unattended
            else NobodyToAsk()
        )
        gate = ApprovalTools(executor, approver, policy=options.policy)
        executor = gate
        _say_policy(*await gate.split(), asked=connector is not None, options=options)
        irc_link: IrcConnector | None = None
        if options.irc is not None:
            irc_link = IrcConnector(
                *options.irc, options.nick, options.channels, mention_only=options.mention_only
            )
            try:
                await irc_link.open()
            except IrcError as exc:
                raise StartupError(str(exc)) from None
            closing.append(irc_link.close)
            notices.pump(irc_link.notices())
        if options.code_mode:
            code = CodeModeTools(executor)
            await code.open()
            closing.append(code.close)
            executor = code
        out = EventWriter()
        logger = (
            _session_logger(options.session_log, options.model)
            if options.session_log is not None
            else None
        )
        runtime = AgentRuntime(backend, executor, ids=RandomIds(), kv=MemoryKV(), observer=logger)

        def write(event: Event) -> None:
            line = record(event)  # the NDJSON edges take the record; observers the event
            out(line)
            if logger is not None:
                logger(line)
            if connector is not None:
                connector.observe(event)
            if irc_link is not None:
                irc_link.observe(event)

        if connector is not None:
            connector.emit = write

        def waiting_for() -> bool:
            # The hub or the IRC network may speak until it ends; a watch until it is dropped.
            live = connector is not None or irc_link is not None
            return live or (watches is not None and (bool(watches.watches) or watches.busy))

        orchestrator = Orchestrator(
            runtime,
            name=options.name,
            prompt=options.prompt,
            write=write,
            max_turns=options.max_turns,
            waiting_for=waiting_for,
        )
        lines: AsyncIterator[str] = stdin_lines() if options.stdin else _no_lines()
        starting = None
        try:
            await orchestrator.run(lines, notices)
        finally:
            await lines.aclose()  # type: ignore[attr-defined]
            await notices.close()
            if watches is not None:
                await watches.close()
            if logger is not None:
                await logger.close()
    except asyncio.CancelledError:
        if not stopped_early:
            raise
        # The cancel was ours and is handled: without this the task stays "cancelling", and
        # the first cancel scope the clean-up enters (closing an MCP server) cancels it again.
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
        log.info("asked to end (%s) while starting: leaving", stopped_early[0])
    finally:
        for close in reversed(closing):
            await close()
        await tools.close()
        if connector is not None:
            await connector.close()
        await backend.close()
    return 0


def _say_policy(unasked: list[str], gated: list[str], *, asked: bool, options: Options) -> None:
    """At start, on stderr: which tools run unasked, and what happens to the others."""
    if unasked:
        log.info("runs unasked: %s", ", ".join(unasked))
    if not gated:
        return
    names = ", ".join(gated)
    if asked:
        log.info("asks the operator before each call of: %s", names)
    elif options.unattended:
        log.warning("--unattended: runs unasked what would wait for an approval: %s", names)
    else:
        log.warning(
            "refuses (no hub, so no operator to approve; --allow TOOL or --unattended to run "
            "them): %s",
            names,
        )


async def _no_lines() -> AsyncIterator[str]:
    """No input on stdin (--no-stdin): the agent listens to its hub, network and watches."""
    return
    yield  # an async generator that ends at once
