"""`caucus agent`: run an autonomous agent on a model, reading input lines on stdin and writing
one NDJSON event per line on stdout (logs go to stderr as NDJSON too)."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:  # the runtime loads when an agent runs, not with every `caucus` command
    from caucus.runtime.backends.base import AgentBackend
    from caucus.runtime.onstart import Prompt
    from caucus.runtime.session.logger import SessionLogger
    from caucus.runtime.tools.approval import Policy

log = logging.getLogger("caucus.agent")


class BackendName(StrEnum):
    OPENAI = "openai"
    CLAUDE_CLI = "claude-cli"
    MOCK = "mock"


DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"  # llama.cpp's llama-server


class StartupError(Exception):
    """The agent cannot start; the message is one line saying what to do."""


def _fail(message: str, code: int) -> typer.Exit:
    sys.stderr.write(f"error: {message}\n")
    return typer.Exit(code)


def agent(
    prompt: Annotated[
        Path | None,
        typer.Option(help="the system prompt, a Markdown file (default: the one Caucus ships)"),
    ] = None,
    backend: Annotated[
        BackendName, typer.Option(help="where answers come from", case_sensitive=False)
    ] = BackendName.OPENAI,
    model: Annotated[
        str | None,
        typer.Option(help="the model's name on the server (openai)", envvar="CAUCUS_AGENT_MODEL"),
    ] = None,
    base_url: Annotated[
        str,
        typer.Option(
            help="the OpenAI-compatible server (llama.cpp, vLLM, Ollama, LM Studio, OpenAI)",
            envvar="CAUCUS_AGENT_BASE_URL",
        ),
    ] = DEFAULT_BASE_URL,
    claude: Annotated[
        str, typer.Option(help="the Claude Code command (claude-cli)", envvar="CAUCUS_CLAUDE")
    ] = "claude",
    api_key_env: Annotated[
        str, typer.Option(help="the environment variable that holds the server's API key")
    ] = "OPENAI_API_KEY",
    start_with_tool: Annotated[
        str | None,
        typer.Option(
            metavar="TOOL", help="openai: the agent's first request must call this tool (forced)"
        ),
    ] = None,
    temperature: Annotated[
        float | None,
        typer.Option(min=0, max=2, help="openai: the sampling temperature (default: the server's)"),
    ] = None,
    mcp_stdio: Annotated[
        list[str] | None,
        typer.Option(
            "--mcp-stdio",
            metavar="CMD",
            help="an MCP server to start over stdio for tools, as one quoted command (repeatable)",
        ),
    ] = None,
    approve: Annotated[
        list[str] | None,
        typer.Option(
            "--approve",
            metavar="TOOL",
            help="this tool runs only once the operator approves the exact call, even if its "
            "server marks it read-only (repeatable; every tool not marked read-only does)",
        ),
    ] = None,
    allow: Annotated[
        list[str] | None,
        typer.Option(
            "--allow",
            metavar="TOOL",
            help="this tool runs unasked, whatever its server says of it (repeatable)",
        ),
    ] = None,
    approve_all: Annotated[
        bool,
        typer.Option(
            "--approve-all", help="every tool of the MCP servers waits, read-only ones too"
        ),
    ] = False,
    unattended: Annotated[
        bool,
        typer.Option(
            "--unattended",
            help="without --hub: run the tools that would wait for an approval unasked "
            "(otherwise they are refused: nobody is there to approve)",
        ),
    ] = False,
    approve_timeout: Annotated[
        float, typer.Option(min=1, help="with --hub: seconds to wait for an approval")
    ] = 600.0,
    irc: Annotated[
        str | None, typer.Option(help="join an IRC network: HOST:PORT", metavar="HOST:PORT")
    ] = None,
    nick: Annotated[str | None, typer.Option(help="with --irc: the nick (default: --name)")] = None,
    channel: Annotated[
        list[str] | None,
        typer.Option("--channel", "-c", help="with --irc: a channel to join (repeatable)"),
    ] = None,
    mention_only: Annotated[
        bool, typer.Option("--mention-only", help="with --irc: only messages naming the nick")
    ] = False,
    no_stdin: Annotated[
        bool, typer.Option("--no-stdin", help="read nothing on stdin: hub, IRC and watches only")
    ] = False,
    code_mode: Annotated[
        bool,
        typer.Option(
            "--code-mode",
            help="give the model one tool, run_code: Python in a sandbox, its tools as functions",
        ),
    ] = False,
    watch_state: Annotated[
        Path | None,
        typer.Option(
            help="keep the resources the agent watches in this file, and watch them again"
        ),
    ] = None,
    session_log: Annotated[
        Path | None,
        typer.Option(
            help="write the session here: an NDJSON transcript and a Claude Code session file"
        ),
    ] = None,
    name: Annotated[str, typer.Option(help="the agent's name")] = "agent",
    hub: Annotated[
        str | None,
        typer.Option(help="join this Caucus hub as a peer (its URL)", envvar="CAUCUS_HUB"),
    ] = None,
    skills: Annotated[
        str | None, typer.Option(help="with --hub: what the agent can do, comma-separated")
    ] = None,
    description: Annotated[str | None, typer.Option(help="with --hub: who the agent is")] = None,
    loop_limit: Annotated[
        int,
        typer.Option(
            min=2,
            help="with --hub: stop answering a peer or channel after this many replies "
            "to it within two minutes (a reply loop)",
        ),
    ] = 8,
    agent_key_env: Annotated[
        str, typer.Option(help="with --hub: the variable holding an exposed hub's agent key")
    ] = "CAUCUS_AGENT_KEY",
    max_turns: Annotated[
        int | None, typer.Option(min=1, help="stop after this many turns (runs)")
    ] = None,
) -> None:
    """Run an agent: input lines on stdin become turns; every event is a JSON line on stdout."""
    from caucus.runtime.onstart import load_prompt
    from caucus.runtime.stdio import log_to_stderr

    log_to_stderr()
    try:
        loaded = load_prompt(prompt, default="room" if hub else "agent")
    except (OSError, ValueError) as exc:
        raise _fail(f"cannot read the prompt: {exc}", 2) from None
    irc_at: tuple[str, int] | None = None
    if irc is not None:
        host, _, port = irc.rpartition(":")
        if not host or not port.isdigit():
            raise _fail(f"--irc takes HOST:PORT, not {irc!r}", 2)
        irc_at = (host.strip("[]"), int(port))
        if not channel:
            raise _fail("--irc needs at least one channel: -c '#name'", 2)
    elif channel or mention_only or nick:
        raise _fail("--channel, --mention-only and --nick go with --irc", 2)
    if unattended and hub:
        raise _fail(
            "--unattended is for an agent without --hub: with a hub, the operator approves", 2
        )
    from caucus.runtime.tools.approval import Policy

    if backend is BackendName.OPENAI and not model:
        raise _fail("--backend openai needs --model: the model's name on the server", 2)
    chosen: AgentBackend
    servers = mcp_stdio or []
    if backend is BackendName.MOCK:
        from caucus.runtime.backends.mock import MockBackend

        chosen = MockBackend()
    elif backend is BackendName.CLAUDE_CLI:
        from caucus.runtime.backends.claude_cli import ClaudeCliBackend

        # Claude Code starts and calls the MCP servers itself.
        chosen = ClaudeCliBackend(command=claude, model=model, mcp_servers=servers)
        servers = []
    else:
        from caucus.runtime.backends.openai_compat import OpenAIBackend

        assert model is not None
        chosen = OpenAIBackend(
            model=model,
            base_url=base_url,
            api_key=os.environ.get(api_key_env),
            start_with_tool=start_with_tool,
            temperature=temperature,
        )
    options = Options(
        name=name,
        prompt=loaded,
        max_turns=max_turns,
        servers=servers,
        session_log=session_log,
        model=model or backend.value,
        hub=hub,
        skills=[x.strip() for x in skills.split(",") if x.strip()] if skills else None,
        description=description,
        agent_key=os.environ.get(agent_key_env) or None,
        loop_limit=loop_limit,
        watch_state=watch_state,
        policy=Policy(frozenset(approve or ()), frozenset(allow or ()), approve_all),
        unattended=unattended,
        approve_timeout=approve_timeout,
        code_mode=code_mode,
        irc=irc_at,
        nick=nick or name,
        channels=list(channel or []),
        mention_only=mention_only,
        stdin=not no_stdin,
    )
    import asyncio  # here: `caucus --help` and `--version` never load the event loop

    try:
        code = asyncio.run(_run(chosen, options))
    except StartupError as exc:
        raise _fail(str(exc), 1) from None
    except KeyboardInterrupt:
        code = 130
    raise typer.Exit(code)


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


async def _run(backend: AgentBackend, options: Options) -> int:
    import asyncio
    import contextlib
    import signal

    from caucus.runtime.agent import AgentRuntime
    from caucus.runtime.backends.base import BackendError
    from caucus.runtime.backends.claude_cli import ClaudeCliBackend
    from caucus.runtime.backends.openai_compat import OpenAIBackend
    from caucus.runtime.connectors.hub import HIDDEN_TOOLS, ConnectorError, HubConnector
    from caucus.runtime.connectors.irc import IrcConnector, IrcError
    from caucus.runtime.ids import MemoryKV, RandomIds
    from caucus.runtime.orchestrator import Control, Notice, NoticeQueue, Orchestrator
    from caucus.runtime.stdio import EventWriter, stdin_lines
    from caucus.runtime.tools.approval import ApprovalTools, Approver, NobodyToAsk, Unattended
    from caucus.runtime.tools.codemode import CodeModeTools
    from caucus.runtime.tools.executor import ToolExecutor
    from caucus.runtime.tools.mcp_servers import McpTools, ToolServerError
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
                await tools.attach("caucus", connector.hub_tools(), hidden=HIDDEN_TOOLS)
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

        def write(event: dict[str, Any]) -> None:
            out(event)
            if logger is not None:
                logger(event)
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
