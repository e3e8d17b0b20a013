"""`caucus status`: is a hub up at the URL, which one, who is in it, and what mode the room is
in (when this machine holds the operator's token)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from caucus.defaults import DEFAULT_HUB
from caucus.errors import CaucusError, HubUnavailable


async def _gather(url: str, token: str | None) -> dict[str, Any]:
    from caucus.client import HubClient
    from caucus.operator_client import OperatorClient

    report: dict[str, Any] = {"url": url, "up": False}
    async with HubClient(url) as client:
        try:
            version = await client.version()
            health = await client.health()
        except HubUnavailable:
            return report
        report.update(up=True, version=version.version, protocol=version.protocol)
        report["uptime"] = health.uptime
        try:
            peers = await client.peers()
        except CaucusError:  # an agent key is required to list them
            report.update(peers=None, online=None)
        else:
            report["peers"] = len(peers)
            report["online"] = sum(p.state == "online" for p in peers)
    report["room"] = None
    if token:
        try:
            async with OperatorClient(url, token=token) as operator:
                report["room"] = (await operator.state()).mode
        except CaucusError:  # not this hub's operator token
            pass
    return report


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes}m" if hours else f"{minutes}m {secs}s"


def status(
    hub: Annotated[str, typer.Option(help="the hub's URL", envvar="CAUCUS_HUB")] = DEFAULT_HUB,
    operator_token_file: Annotated[
        Path | None, typer.Option(help="the operator's token, to show the room's mode")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Say whether a hub is up at the URL: its version, its peers and the room's mode."""
    from caucus.cli.purge import kept_operator_token

    token: str | None
    try:
        token = kept_operator_token(operator_token_file, None, None)
    except (OSError, ValueError):
        token = os.environ.get("CAUCUS_OPERATOR_TOKEN")
    import asyncio  # lazily: `caucus --help` never loads it

    report = asyncio.run(_gather(hub.rstrip("/"), token))
    if json_output:
        print(json.dumps(report))
    elif not report["up"]:
        typer.echo(f"no hub is answering at {hub}", err=True)
        typer.echo("start one with `caucus hub` (or `./dev hub` in a checkout)", err=True)
    else:
        peers = (
            "peers: not listed without an agent key"
            if report["peers"] is None
            else f"peers: {report['peers']} ({report['online']} online)"
        )
        room = f"room: {report['room']}" if report["room"] else "room: (operator token needed)"
        print(
            f"hub at {hub}: up {_duration(report['uptime'])}, caucus {report['version']} "
            f"(protocol {report['protocol']})"
        )
        print(f"{peers}; {room}")
    raise typer.Exit(0 if report["up"] else 1)
