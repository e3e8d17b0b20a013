"""The options of `caucus agent`, as data (`cli/agent.py` binds them to its parameters)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class BackendName(StrEnum):
    OPENAI = "openai"
    CLAUDE_CLI = "claude-cli"
    MOCK = "mock"


DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"  # llama.cpp's llama-server


Prompt = Annotated[
    Path | None,
    typer.Option(help="the system prompt, a Markdown file (default: the one Caucus ships)"),
]
Backend = Annotated[BackendName, typer.Option(help="where answers come from", case_sensitive=False)]
Model = Annotated[
    str | None,
    typer.Option(help="the model's name on the server (openai)", envvar="CAUCUS_AGENT_MODEL"),
]
BaseUrl = Annotated[
    str,
    typer.Option(
        help="the OpenAI-compatible server (llama.cpp, vLLM, Ollama, LM Studio, OpenAI)",
        envvar="CAUCUS_AGENT_BASE_URL",
    ),
]
Claude = Annotated[
    str, typer.Option(help="the Claude Code command (claude-cli)", envvar="CAUCUS_CLAUDE")
]
ApiKeyEnv = Annotated[
    str, typer.Option(help="the environment variable that holds the server's API key")
]
StartWithTool = Annotated[
    str | None,
    typer.Option(
        metavar="TOOL", help="openai: the agent's first request must call this tool (forced)"
    ),
]
Temperature = Annotated[
    float | None,
    typer.Option(min=0, max=2, help="openai: the sampling temperature (default: the server's)"),
]
McpStdio = Annotated[
    list[str] | None,
    typer.Option(
        "--mcp-stdio",
        metavar="CMD",
        help="an MCP server to start over stdio for tools, as one quoted command (repeatable)",
    ),
]
Approve = Annotated[
    list[str] | None,
    typer.Option(
        "--approve",
        metavar="TOOL",
        help="this tool runs only once the operator approves the exact call, even if its "
        "server marks it read-only (repeatable; every tool not marked read-only does)",
    ),
]
Allow = Annotated[
    list[str] | None,
    typer.Option(
        "--allow",
        metavar="TOOL",
        help="this tool runs unasked, whatever its server says of it (repeatable)",
    ),
]
ApproveAll = Annotated[
    bool,
    typer.Option("--approve-all", help="every tool of the MCP servers waits, read-only ones too"),
]
Unattended = Annotated[
    bool,
    typer.Option(
        "--unattended",
        help="without --hub: run the tools that would wait for an approval unasked "
        "(otherwise they are refused: nobody is there to approve)",
    ),
]
ApproveTimeout = Annotated[
    float, typer.Option(min=1, help="with --hub: seconds to wait for an approval")
]
Irc = Annotated[
    str | None, typer.Option(help="join an IRC network: HOST:PORT", metavar="HOST:PORT")
]
Nick = Annotated[str | None, typer.Option(help="with --irc: the nick (default: --name)")]
Channel = Annotated[
    list[str] | None,
    typer.Option("--channel", "-c", help="with --irc: a channel to join (repeatable)"),
]
MentionOnly = Annotated[
    bool, typer.Option("--mention-only", help="with --irc: only messages naming the nick")
]
NoStdin = Annotated[
    bool, typer.Option("--no-stdin", help="read nothing on stdin: hub, IRC and watches only")
]
CodeMode = Annotated[
    bool,
    typer.Option(
        "--code-mode",
        help="give the model one tool, run_code: Python in a sandbox, its tools as functions",
    ),
]
WatchState = Annotated[
    Path | None,
    typer.Option(help="keep the resources the agent watches in this file, and watch them again"),
]
SessionLog = Annotated[
    Path | None,
    typer.Option(
        help="write the session here: an NDJSON transcript and a Claude Code session file"
    ),
]
Name = Annotated[str, typer.Option(help="the agent's name")]
Hub = Annotated[
    str | None, typer.Option(help="join this Caucus hub as a peer (its URL)", envvar="CAUCUS_HUB")
]
Skills = Annotated[
    str | None, typer.Option(help="with --hub: what the agent can do, comma-separated")
]
Description = Annotated[str | None, typer.Option(help="with --hub: who the agent is")]
LoopLimit = Annotated[
    int,
    typer.Option(
        min=2,
        help="with --hub: stop answering a peer or channel after this many replies "
        "to it within two minutes (a reply loop)",
    ),
]
AgentKeyEnv = Annotated[
    str, typer.Option(help="with --hub: the variable holding an exposed hub's agent key")
]
MaxTurns = Annotated[int | None, typer.Option(min=1, help="stop after this many turns (runs)")]
