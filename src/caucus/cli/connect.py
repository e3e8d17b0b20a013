"""`caucus connect`: set a host up for Caucus in one command (`--dry-run` prints instead,
`--json` for scripts)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from caucus.connect import (
    ConfigError,
    Host,
    Plan,
    Scope,
    caucus_command,
    gemini_trust_file,
    gemini_trusts,
    plan,
    trust_in_gemini,
    write,
)
from caucus.defaults import DEFAULT_HUB
from caucus.errors import CaucusError
from caucus.files import private_dir, replace_atomically


def connect(
    host: Annotated[Host, typer.Argument(help="the host to set up")],
    http: Annotated[
        bool, typer.Option("--http", help="connect over Streamable HTTP (/mcp), not the bridge")
    ] = False,
    scope: Annotated[
        Scope, typer.Option(help="user: every project; project: this directory only")
    ] = Scope.USER,
    hub: Annotated[str, typer.Option(envvar="CAUCUS_HUB", help="the hub's URL")] = DEFAULT_HUB,
    channel: Annotated[
        bool, typer.Option(help="claude: push messages into the session (channels)")
    ] = False,
    plugin: Annotated[
        Path | None,
        typer.Option(help="claude: also write a plugin folder here (MCP entry, hook, commands)"),
    ] = None,
    trust_folder: Annotated[
        bool | None,
        typer.Option(
            "--trust-folder/--no-trust-folder",
            help="gemini: trust this folder in Gemini CLI, which runs no MCP server in a folder "
            "it does not trust (default: ask in a terminal)",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print the change to the caucus entry, write nothing")
    ] = False,
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Write the host's own MCP config for Caucus, merged into what is there."""
    try:
        found = plan(host, scope, hub, http=http, channel=channel)
        trusted = gemini_trusts(Path.home(), Path.cwd()) if host is Host.GEMINI else None
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    if trusted is False and trust_folder is None and not (dry_run or json_output):
        trust_folder = sys.stdin.isatty() and typer.confirm(
            f"Gemini CLI runs MCP servers only in folders you trust. Trust {Path.cwd()}?",
            default=True,
            err=True,
        )
    plugin_files = claude_plugin(found.entry, hub) if plugin is not None else {}
    if plugin is not None and host is not Host.CLAUDE:
        print("error: --plugin is for claude", file=sys.stderr)
        raise typer.Exit(2)
    trusting = trusted is False and bool(trust_folder)
    hub_version = _hub_version_now(hub)
    if not dry_run:
        _write(found, trusting, plugin or Path(), plugin_files)
        trusted = True if trusting else trusted
    report = {
        "host": host.value,
        "path": str(found.path),
        "entry": found.entry,
        "merged": found.existed,
        "replaced": found.replaced,
        "written": not dry_run,
        "plugin": [str((plugin or Path()) / p) for p in plugin_files] if plugin else None,
        # gemini: whether Gemini CLI will run the server in this folder (None: it asks no one)
        "folder_trusted": trusted if host is Host.GEMINI else None,
        "hub": {"url": hub, "up": hub_version is not None, "version": hub_version},
    }
    if json_output:
        print(json.dumps(report))
        return
    if dry_run:
        _say_planned(found, trusting, plugin or Path(), plugin_files)
        return
    _say_done(found, plugin, trusting=trusting, trusted=trusted)
    if hub_version is None:
        print(_no_hub(hub), file=sys.stderr)
    print(f"next: {_next_step(host, http)}")


def _write(found: Plan, trusting: bool, plugin: Path, plugin_files: dict[str, str]) -> None:
    """The host's config written, the folder trusted (gemini), the plugin's files written."""
    write(found)
    if trusting:
        try:
            trust_in_gemini(Path.home(), Path.cwd())
        except ConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(2) from None
    for relative, text in plugin_files.items():
        target = plugin / relative
        private_dir(target.parent)
        replace_atomically(target, text.encode("utf-8"), mode=0o644)


def _say_planned(found: Plan, trusting: bool, plugin: Path, plugin_files: dict[str, str]) -> None:
    print(found.diff(), end="")
    if trusting:
        print(f"# would trust {Path.cwd()} in {gemini_trust_file(Path.home())}")
    for relative, text in plugin_files.items():
        print(f"# would write {plugin / relative}")
        print(text, end="" if text.endswith("\n") else "\n")


def _say_done(found: Plan, plugin: Path | None, *, trusting: bool, trusted: bool | None) -> None:
    how = "replaced the caucus entry in" if found.replaced else "added caucus to"
    print(f"{how} {found.path}" + (" (other servers kept)" if found.existed else ""))
    if plugin is not None:
        print(f"wrote the Claude Code plugin in {plugin}")
    if trusting:
        print(f"trusted {Path.cwd()} in Gemini CLI ({gemini_trust_file(Path.home())})")
    elif trusted is False:
        print(
            f"Gemini CLI runs no MCP server in {Path.cwd()} until you trust it: run "
            "`caucus connect gemini --trust-folder` here, or choose 'Trust folder' when "
            "gemini asks (/permissions changes it later)"
        )


PROBE_SECONDS = 2.0


def _hub_version_now(url: str) -> str | None:
    import asyncio  # a command that runs a loop loads it; `caucus --help` does not

    return asyncio.run(_hub_version(url))


async def _hub_version(url: str) -> str | None:
    """The version of the Caucus hub answering at `url`, or None when none does (nothing
    listens, or something else answers)."""
    from caucus.client import HubClient

    try:
        async with HubClient(url, timeout=PROBE_SECONDS) as client:
            return (await client.version()).version
    except (CaucusError, ValueError):
        return None


def _no_hub(url: str) -> str:
    return (
        f"warning: no Caucus hub answers at {url} yet: the host will find no room until one "
        "does. Start one with `caucus hub` (another terminal), or `caucus service install` to "
        "keep it running; `caucus status` checks."
    )


def _next_step(host: Host, http: bool) -> str:
    if host is Host.CLAUDE:
        return "start claude and ask it to join caucus (`claude mcp list` shows it)"
    if host is Host.CODEX:
        return "start codex; the caucus tools are listed under /mcp"
    return "start gemini; /mcp lists the caucus server"


def claude_plugin(entry: dict[str, Any], hub: str) -> dict[str, str]:
    """A Claude Code plugin: the MCP entry, a SessionStart hook that starts the hub service
    when it is down, and short slash commands for join, status and leave."""
    start = " ".join([*caucus_command(), "service", "start", "--quiet"])
    files = {
        ".claude-plugin/plugin.json": json.dumps(
            {
                "name": "caucus",
                "description": "Join a Caucus room: message other agents, take tasks, ask the "
                "operator",
                "version": "1.0.0",
            },
            indent=2,
        )
        + "\n",
        ".mcp.json": json.dumps({"mcpServers": {"caucus": entry}}, indent=2) + "\n",
        "hooks/hooks.json": json.dumps(
            {
                "hooks": {
                    "SessionStart": [{"hooks": [{"type": "command", "command": start}]}],
                }
            },
            indent=2,
        )
        + "\n",
    }
    from caucus.mcp.prompts import PROMPTS  # the MCP SDK's types: only when a plugin is made

    for name, prompt in PROMPTS.items():
        body = f"---\ndescription: {prompt.description}\n---\n\n{prompt.text}\n"
        files[f"commands/{name}.md"] = body
    del hub
    return files
