"""`caucus agent`: run an autonomous agent on a model, reading input lines on stdin and writing
one NDJSON event per line on stdout (logs go to stderr as NDJSON too)."""

from __future__ import annotations

import logging
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

log = logging.getLogger("caucus.agent")


class BackendName(StrEnum):
    OPENAI = "openai"
    CLAUDE_CLI = "claude-cli"
    MOCK = "mock"


DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"  # llama.cpp's llama-server


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
    from caucus.runtime.assembly import Options, StartupError, make_backend, run_agent
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
    import asyncio  # here: `caucus --help` and `--version` never load the event loop

    try:
        code = asyncio.run(run_agent(chosen, options))
    except StartupError as exc:
        raise _fail(str(exc), 1) from None
    except KeyboardInterrupt:
        code = 130
    raise typer.Exit(code)
