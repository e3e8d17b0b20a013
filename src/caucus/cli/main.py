"""The `caucus` command line: the app, its front-door options, and every command group.

Every command's machinery loads when that command runs: `caucus --help` and the bridge start
in a fraction of the time the hub, the runtime and the MCP SDK take to import (issue 30).
"""

from __future__ import annotations

import json
import os
from typing import Annotated

import typer

from caucus import __version__
from caucus.cli.agent import agent
from caucus.cli.bridge import bridge, watch_command
from caucus.cli.briefing import briefing, init
from caucus.cli.common import err
from caucus.cli.connect import connect
from caucus.cli.db import db_app
from caucus.cli.deliberate import deliberate
from caucus.cli.guard import guard_app
from caucus.cli.hub import hub
from caucus.cli.intents import intents_app, outcome
from caucus.cli.ledger import anchor_command, verify_command
from caucus.cli.service import service_app
from caucus.cli.status import status
from caucus.defaults import READ_ELSEWHERE

app = typer.Typer(
    name="caucus",
    help="Caucus: a local-first, supervised coordination hub for AI agents.",
    no_args_is_help=True,
    add_completion=False,
)


def version(
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Print the version (of this command; `caucus status` asks the hub for its own)."""
    from caucus.protocol import PROTOCOL_VERSION

    if json_output:
        print(json.dumps({"version": __version__, "protocol": PROTOCOL_VERSION}))
        return
    print(__version__)


def settings(
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Show the effective settings (defaults, config file, environment)."""
    from caucus.config import load_settings

    current = load_settings().model_dump()
    current["db"] = load_settings().db_shown()
    if json_output:
        print(json.dumps(current, indent=2))
        return
    for key, value in current.items():
        print(f"{key} = {value!r}")


def _print_version(value: bool) -> None:
    if value:
        print(__version__)
        raise typer.Exit(0)


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="print the version and exit"
        ),
    ] = False,
) -> None:
    """Caucus: a local-first, supervised coordination hub for AI agents."""


def main() -> None:
    _warn_unknown_variables()
    try:
        app()
    except ValueError as exc:
        from caucus.config import BadSettings

        if not isinstance(exc, BadSettings):
            raise
        for line in str(exc).splitlines():
            err.print(f"[bold red]error:[/] {line}", markup=True, highlight=False)
        err.print("[dim]see `caucus settings` and the settings table in README.md[/]")
        raise SystemExit(2) from None


def _warn_unknown_variables() -> None:
    """A CAUCUS_* variable that looks like a mistyped setting is said, loading the settings'
    names only when some CAUCUS_* variable could be one."""
    if not any(
        v.startswith("CAUCUS_") and v not in READ_ELSEWHERE and not v.startswith("CAUCUS_TEST_")
        for v in os.environ
    ):
        return
    from caucus.config import unknown_variables

    for line in unknown_variables():
        err.print(f"[yellow]warning:[/] {line}", markup=True)


if __name__ == "__main__":
    main()


app.command()(hub)
app.command()(bridge)
app.command("watch")(watch_command)
app.command()(version)
app.command()(settings)
app.add_typer(db_app, name="db")
app.command("agent")(agent)
app.command("deliberate")(deliberate)
app.command("verify")(verify_command)
app.command("anchor")(anchor_command)
app.command("briefing")(briefing)
app.command("init")(init)
app.command("outcome")(outcome)
app.add_typer(intents_app, name="intents")
app.command("status")(status)
app.command("connect")(connect)
app.add_typer(service_app, name="service")
app.add_typer(guard_app, name="guard")
