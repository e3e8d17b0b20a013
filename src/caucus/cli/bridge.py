"""`caucus bridge` and `caucus watch`: the two commands an MCP host runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from caucus.cli.common import _fail, _run_loop


def bridge(
    hub_url: Annotated[
        str, typer.Option("--hub", envvar="CAUCUS_HUB", help="the hub's URL")
    ] = "http://127.0.0.1:8765",
    name: Annotated[
        str | None,
        typer.Option(help="the name join uses by default ($CAUCUS_NAME, else this directory's)"),
    ] = None,
) -> None:
    """Serve the Caucus tools over stdio (MCP), for a host that starts one per session."""
    from caucus.mcp.bridge import Bridge, run_bridge

    raise typer.Exit(run_bridge(Bridge(hub_url, name=name)))


def watch_command(
    session: Annotated[
        Path | None,
        typer.Option(
            help="the 0600 session file watch_command named (default: $CAUCUS_SESSION)",
            envvar="CAUCUS_SESSION",
        ),
    ] = None,
    ticket: Annotated[
        str | None,
        typer.Option(help="a single-use ticket from watch_command, redeemed at --hub"),
    ] = None,
    hub_url: Annotated[
        str | None,
        typer.Option("--hub", help="the hub (with --ticket), or instead of the session file's"),
    ] = None,
    poll: Annotated[float, typer.Option(help="seconds per long-poll")] = 25.0,
    give_up: Annotated[
        float, typer.Option(help="seconds of a hub that does not answer before giving up")
    ] = 30.0,
    push: Annotated[
        str | None,
        typer.Option(
            help="'codex': deliver each burst as a turn of this Codex session (inside one: "
            "CODEX_THREAD_ID); rests on undocumented Codex behaviour; also CAUCUS_CODEX_PUSH=1",
        ),
    ] = None,
    follow_: Annotated[
        bool,
        typer.Option(
            "--follow",
            help="keep running, printing each message as one line as it comes (for a host "
            "that turns each line into a turn: Claude Code's Monitor tool)",
        ),
    ] = False,
) -> None:
    """Wait for this session's next messages, print them (wrapped as untrusted data), exit
    (with --follow: keep waiting, one line per message).

    The first line on stdout says how it ended, and so does the exit status: 0 MESSAGES (the
    batch follows), 1 SESSION EXPIRED, 2 BAD SESSION, 3 HUB UNREACHABLE, 4 STOP, 5 DISPLACED
    (your own listen took over: do not relaunch), 6 TICKET REJECTED.
    """
    from caucus.mcp.watch import Ending, Session, end, follow, read_session, redeem, watch

    if push is None and os.environ.get("CAUCUS_CODEX_PUSH") == "1":
        push = "codex"
    if push not in (None, "codex"):
        _fail(f"--push {push!r}: the one push this knows is 'codex'")

    def run(found: Session) -> int:
        thread = os.environ.get("CODEX_THREAD_ID")
        if push == "codex" and thread:
            from caucus.mcp.codex import push_codex

            return _run_loop(push_codex(found, thread, poll=poll, give_up=give_up))
        if push == "codex":
            print(
                "warning: --push codex outside a Codex session (no CODEX_THREAD_ID): "
                "waking by printing instead",
                file=sys.stderr,
            )
        if follow_:
            return _run_loop(follow(found, poll=poll, give_up=give_up))
        return _run_loop(watch(found, poll=poll, give_up=give_up))

    def bad(detail: str) -> None:
        print(f"error: {detail}", file=sys.stderr)
        raise typer.Exit(end(Ending.BAD_SESSION, sys.stdout, f"({detail})"))

    if ticket is not None:
        if not hub_url:
            bad("--ticket needs --hub URL (watch_command gives both)")
        assert hub_url is not None
        redeemed = _run_loop(redeem(hub_url, ticket))
        if isinstance(redeemed, int):
            raise typer.Exit(redeemed)
        raise typer.Exit(run(redeemed))
    if session is None:
        bad("no session: give --session FILE, or --hub URL --ticket T")
        return
    try:
        found = read_session(session)
    except FileNotFoundError:
        bad(f"no session file at {session} (the session left, or the host restarted)")
        return
    except (PermissionError, ValueError, KeyError) as exc:
        bad(f"cannot use the session file {session}: {exc}")
        return
    if hub_url:
        found = Session(hub_url, found.name, found.key)
    raise typer.Exit(run(found))
