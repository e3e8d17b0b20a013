"""`caucus agent`: run an autonomous agent on a model, reading input lines on stdin and writing
one NDJSON event per line on stdout (logs go to stderr as NDJSON too)."""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

import typer

from caucus.cli import agent_options as o
from caucus.cli.agent_options import DEFAULT_BASE_URL, BackendName

if TYPE_CHECKING:
    from caucus.models.seam import AgentBackend
    from caucus.runtime.assembly import Options

log = logging.getLogger("caucus.agent")


def _fail(message: str, code: int) -> typer.Exit:
    sys.stderr.write(f"error: {message}\n")
    return typer.Exit(code)


def agent(
    prompt: o.Prompt = None,
    backend: o.Backend = BackendName.OPENAI,
    model: o.Model = None,
    base_url: o.BaseUrl = DEFAULT_BASE_URL,
    claude: o.Claude = "claude",
    api_key_env: o.ApiKeyEnv = "OPENAI_API_KEY",
    start_with_tool: o.StartWithTool = None,
    temperature: o.Temperature = None,
    mcp_stdio: o.McpStdio = None,
    approve: o.Approve = None,
    allow: o.Allow = None,
    approve_all: o.ApproveAll = False,
    unattended: o.Unattended = False,
    approve_timeout: o.ApproveTimeout = 600.0,
    irc: o.Irc = None,
    nick: o.Nick = None,
    channel: o.Channel = None,
    mention_only: o.MentionOnly = False,
    no_stdin: o.NoStdin = False,
    code_mode: o.CodeMode = False,
    watch_state: o.WatchState = None,
    session_log: o.SessionLog = None,
    name: o.Name = "agent",
    hub: o.Hub = None,
    skills: o.Skills = None,
    description: o.Description = None,
    loop_limit: o.LoopLimit = 8,
    agent_key_env: o.AgentKeyEnv = "CAUCUS_AGENT_KEY",
    max_turns: o.MaxTurns = None,
) -> None:
    """Run an agent: input lines on stdin become turns; every event is a JSON line on stdout."""
    from caucus.runtime.onstart import load_prompt
    from caucus.runtime.stdio import log_to_stderr

    log_to_stderr()
    try:
        loaded = load_prompt(prompt, default="room" if hub else "agent")
    except (OSError, ValueError) as exc:
        raise _fail(f"cannot read the prompt: {exc}", 2) from None
    irc_at = _irc_at(irc, bool(channel), mention_only or bool(nick))
    if unattended and hub:
        raise _fail(
            "--unattended is for an agent without --hub: with a hub, the operator approves", 2
        )
    from caucus.runtime.assembly import Options, make_backend
    from caucus.runtime.tools.approval import Policy

    if backend is BackendName.OPENAI and not model:
        raise _fail("--backend openai needs --model: the model's name on the server", 2)
    chosen, servers = make_backend(
        backend.value,
        model=model,
        base_url=base_url,
        claude=claude,
        api_key=os.environ.get(api_key_env),
        start_with_tool=start_with_tool,
        temperature=temperature,
        servers=mcp_stdio or [],
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
    raise typer.Exit(_run(chosen, options))


def _irc_at(irc: str | None, channels: bool, irc_only: bool) -> tuple[str, int] | None:
    """`--irc HOST:PORT` as an address, with what must (and must only) go with it."""
    if irc is None:
        if channels or irc_only:
            raise _fail("--channel, --mention-only and --nick go with --irc", 2)
        return None
    host, _, port = irc.rpartition(":")
    if not host or not port.isdigit():
        raise _fail(f"--irc takes HOST:PORT, not {irc!r}", 2)
    if not channels:
        raise _fail("--irc needs at least one channel: -c '#name'", 2)
    return host.strip("[]"), int(port)


def _run(backend: AgentBackend, options: Options) -> int:
    """The agent's run to its end: its exit code."""
    import asyncio  # here: `caucus --help` and `--version` never load the event loop

    from caucus.runtime.assembly import StartupError, run_agent

    try:
        return asyncio.run(run_agent(backend, options))
    except StartupError as exc:
        raise _fail(str(exc), 1) from None
    except KeyboardInterrupt:
        return 130
