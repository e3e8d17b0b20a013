"""What `caucus agent` runs, put together from its options one part at a time: the backend
checked, the hub joined (its tools offered), the MCP servers started and their resources
watched, every call that may change things behind the operator's approval, the IRC network
joined, code mode around it all, and the session log; then the orchestrator over them. Each
part it opens it also closes, whatever happened after (`close`)."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from caucus.models.mcp_tools import McpTools, ToolServerError
from caucus.models.openai_compat import OpenAIBackend
from caucus.models.seam import AgentBackend, BackendError
from caucus.models.tools import ToolExecutor
from caucus.runtime.agent import AgentRuntime
from caucus.runtime.assembly import Options, StartupError
from caucus.runtime.backends.claude_cli import ClaudeCliBackend
from caucus.runtime.connectors.hub import HIDDEN_TOOLS, ConnectorError, HubConnector
from caucus.runtime.connectors.irc import IrcConnector, IrcError
from caucus.runtime.events import Event, record
from caucus.runtime.ids import MemoryKV, RandomIds
from caucus.runtime.orchestrator import Notice, NoticeQueue, Orchestrator
from caucus.runtime.session.claude import ClaudeSessionHarness, project_folder
from caucus.runtime.session.logger import SessionLogger
from caucus.runtime.session.transcript import TranscriptHarness
from caucus.runtime.stdio import EventWriter, stdin_lines
from caucus.runtime.tools.approval import ApprovalTools, Approver, NobodyToAsk, Unattended
from caucus.runtime.tools.codemode import CodeModeTools
from caucus.runtime.tools.resources import ResourceTools, WatchManager

log = logging.getLogger("caucus.agent")


class AgentBuilder:
    def __init__(self, backend: AgentBackend, options: Options) -> None:
        self.backend = backend
        self.options = options
        self.tools = McpTools()
        self.executor: ToolExecutor = self.tools
        self.notices = NoticeQueue()
        self.connector: HubConnector | None = None
        self.watches: WatchManager | None = None
        self.irc: IrcConnector | None = None
        self.logger: SessionLogger | None = None
        self._closing: list[Callable[[], Awaitable[None]]] = []

    async def build(self) -> None:
        """Every part, in the order each needs the ones before; StartupError says which
        could not start and what to do."""
        await self._check_backend()
        await self._join_hub()
        await self._start_servers()
        await self._gate()
        await self._join_irc()
        if self.options.code_mode:
            code = CodeModeTools(self.executor)
            await code.open()
            self._closing.append(code.close)
            self.executor = code
        if self.options.session_log is not None:
            self.logger = session_logger(self.options.session_log, self.options.model)

    async def _check_backend(self) -> None:
        if isinstance(self.backend, OpenAIBackend | ClaudeCliBackend):
            try:
                await self.backend.check()
            except BackendError as exc:
                raise StartupError(str(exc)) from None

    async def _join_hub(self) -> None:
        options = self.options
        if options.hub is None:
            return
        self.connector = connector = HubConnector(
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
        if isinstance(self.backend, ClaudeCliBackend):
            log.warning("with --backend claude-cli the room's tools are not offered")
        else:
            await self.tools.attach("caucus", connector.hub_tools(), hidden=HIDDEN_TOOLS, room=True)

    async def _start_servers(self) -> None:
        options = self.options
        try:
            await self.tools.start_stdio(options.servers)
        except ToolServerError as exc:
            raise StartupError(str(exc)) from None
        if options.servers:
            watches = WatchManager(self.tools, self.notices.put, state=options.watch_state)
            self.watches = watches
            self.executor = ResourceTools(self.tools, watches)
            restored = await watches.restore()
            if restored is not None:  # folded into the On Start turn
                self.notices.put(Notice("watch-state", restored))
            await watches.follow_inboxes()  # a server joined already offers its inbox
        if self.connector is not None:
            self.notices.pump(self.connector.notices())

    async def _gate(self) -> None:
        """Calls that may change things wait for the operator's approval of that exact call."""
        options, connector = self.options, self.connector
        approver: Approver = (
            connector
            if connector is not None
            else Unattended()
            if options.unattended
            else NobodyToAsk()
        )
        gate = ApprovalTools(self.executor, approver, policy=options.policy)
        self.executor = gate
        _say_policy(*await gate.split(), asked=connector is not None, options=options)

    async def _join_irc(self) -> None:
        options = self.options
        if options.irc is None:
            return
        self.irc = irc = IrcConnector(
            *options.irc, options.nick, options.channels, mention_only=options.mention_only
        )
        try:
            await irc.open()
        except IrcError as exc:
            raise StartupError(str(exc)) from None
        self._closing.append(irc.close)
        self.notices.pump(irc.notices())

    # --- running ------------------------------------------------------------------------------
    def orchestrator(self) -> Orchestrator:
        """The runtime over the parts, every event written to stdout and heard by the log and
        the connectors."""
        out = EventWriter()
        logger, connector, irc, watches = self.logger, self.connector, self.irc, self.watches
        runtime = AgentRuntime(
            self.backend, self.executor, ids=RandomIds(), kv=MemoryKV(), observer=logger
        )

        def write(event: Event) -> None:
            line = record(event)  # the NDJSON edges take the record; observers the event
            out(line)
            if logger is not None:
                logger(line)
            if connector is not None:
                connector.observe(event)
            if irc is not None:
                irc.observe(event)

        if connector is not None:
            connector.emit = write

        def waiting_for() -> bool:
            # The hub or the IRC network may speak until it ends; a watch until it is dropped.
            live = connector is not None or irc is not None
            return live or (watches is not None and (bool(watches.watches) or watches.busy))

        return Orchestrator(
            runtime,
            name=self.options.name,
            prompt=self.options.prompt,
            write=write,
            max_turns=self.options.max_turns,
            waiting_for=waiting_for,
        )

    async def run(self, orchestrator: Orchestrator) -> None:
        lines: AsyncIterator[str] = stdin_lines() if self.options.stdin else _no_lines()
        try:
            await orchestrator.run(lines, self.notices)
        finally:
            await lines.aclose()  # type: ignore[attr-defined]
            await self.notices.close()
            if self.watches is not None:
                await self.watches.close()
            if self.logger is not None:
                await self.logger.close()

    async def close(self) -> None:
        for close in reversed(self._closing):
            await close()
        await self.tools.close()
        if self.connector is not None:
            await self.connector.close()
        await self.backend.close()


def session_logger(folder: Path, model: str) -> SessionLogger:
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
