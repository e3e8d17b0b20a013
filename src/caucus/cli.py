"""The `caucus` command line."""

from __future__ import annotations

import gc
import json
import os
import socket
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from caucus import __version__
from caucus.agent_cli import agent
from caucus.connect_cli import connect, service_app
from caucus.db_cli import db_app
from caucus.defaults import READ_ELSEWHERE
from caucus.deliberation.cli_briefing import briefing, init
from caucus.deliberation.cli_intents import intents_app, outcome
from caucus.deliberation.commands import deliberate
from caucus.errors import CaucusError
from caucus.ledger_cli import anchor_command, verify_command
from caucus.status_cli import status

# Every command's machinery loads when that command runs: `caucus --help` and the bridge start
# in a fraction of the time the hub, the runtime and the MCP SDK take to import (issue 30).
if TYPE_CHECKING:
    from caucus.config import Settings

T = TypeVar("T")

app = typer.Typer(
    name="caucus",
    help="Caucus: a local-first, supervised coordination hub for AI agents.",
    no_args_is_help=True,
    add_completion=False,
)
err = Console(stderr=True, soft_wrap=True, highlight=False)


def _fail(message: str, hint: str | None = None) -> None:
    err.print(f"[bold red]error:[/] {message}")
    if hint:
        err.print(f"[dim]{hint}[/]")
    raise typer.Exit(2)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and
    # without it every response whose head and body go out as two writes waits ~40 ms for
    # the client's delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        _fail(
            f"cannot listen on {host}:{port}: {exc.strerror}",
            "another hub may be running there; pick another --port",
        )
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


@app.command()
def hub(
    host: Annotated[str | None, typer.Option(help="address to bind (default 127.0.0.1)")] = None,
    port: Annotated[
        int | None, typer.Option(help="port (default 8765; 0 picks a free one)")
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(help="SQLite file (default: in the user data directory) or postgresql:// URL"),
    ] = None,
    config: Annotated[
        Path | None, typer.Option(help="TOML config file (keys as in `CAUCUS_*` without prefix)")
    ] = None,
    peer_ttl: Annotated[
        float | None, typer.Option(help="seconds of silence before a peer is reaped")
    ] = None,
    log_level: Annotated[str | None, typer.Option(help="debug, info, warning, error")] = None,
    operator_token: Annotated[
        str | None,
        typer.Option(
            help="the operator's token (default: generated once, kept in the data dir); "
            "visible to `ps`: prefer --operator-token-file or CAUCUS_OPERATOR_TOKEN"
        ),
    ] = None,
    operator_token_file: Annotated[
        Path | None, typer.Option(help="read the operator's token from this file")
    ] = None,
    observer_token: Annotated[
        str | None, typer.Option(help="a token for a read-only observer (visible to `ps`)")
    ] = None,
    observer_token_file: Annotated[
        Path | None, typer.Option(help="read the observer's token from this file")
    ] = None,
    agent_key: Annotated[
        str | None,
        typer.Option(
            help="a key agents must send (X-Caucus-Agent-Key) to register (visible to `ps`)"
        ),
    ] = None,
    agent_key_file: Annotated[
        Path | None, typer.Option(help="read the agent key from this file")
    ] = None,
    allowed_hosts: Annotated[
        str | None, typer.Option(help="extra Host names to answer to, comma-separated (proxies)")
    ] = None,
    allowed_origins: Annotated[
        str | None, typer.Option(help="extra web origins allowed to call, comma-separated")
    ] = None,
    transcript: Annotated[
        str | None, typer.Option(help="append every routed message to this JSONL file")
    ] = None,
    access_log: Annotated[
        bool, typer.Option(help="log every request (credentials are redacted)")
    ] = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="print the startup line as JSON")
    ] = False,
) -> None:
    """Run the hub: HTTP API on 127.0.0.1:8765, SQLite database in the user data directory."""
    from caucus import logs
    from caucus.config import exposed, load_settings

    operator_token = _secret(operator_token, operator_token_file, "--operator-token")
    observer_token = _secret(observer_token, observer_token_file, "--observer-token")
    agent_key = _secret(agent_key, agent_key_file, "--agent-key")
    try:
        settings = load_settings(
            config,
            host=host,
            port=port,
            db=db,
            peer_ttl=peer_ttl,
            log_level=log_level,
            operator_token=operator_token,
            observer_token=observer_token,
            agent_key=agent_key,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
            transcript=transcript,
        )
    except ValueError as exc:  # BadSettings, or a flag's value a validator refused
        _fail(str(exc))
        return
    if exposed(settings.host) and not (settings.operator_token and settings.agent_key):
        _fail(
            f"refusing to listen on {settings.host}, which other machines can reach, without "
            "credentials set up for it",
            "set an operator token (--operator-token or CAUCUS_OPERATOR_TOKEN) and an agent key "
            "(--agent-key or CAUCUS_AGENT_KEY); also list the names clients use to reach this "
            "hub in --allowed-hosts. Or keep the default --host 127.0.0.1.",
        )
    logs.configure(
        settings.log_level,
        secrets=[settings.operator_token, settings.observer_token or "", settings.agent_key or ""],
    )
    sock = _bind(settings.host, settings.port)
    try:
        code = _run_loop(_serve(settings, sock, access_log=access_log, json_output=json_output))
    finally:
        sock.close()
    if code:
        raise typer.Exit(code)


def _secret(value: str | None, file: Path | None, flag: str) -> str | None:
    """A credential from its flag or, kept out of `ps`, from the file its -file flag names."""
    if file is None:
        return value
    if value is not None:
        _fail(f"give {flag} or {flag}-file, not both")
    try:
        text = file.expanduser().read_text(encoding="utf-8").strip()
    except OSError as exc:
        _fail(f"cannot read {flag}-file {file}: {exc.strerror}")
        return None
    if not text:
        _fail(f"{flag}-file {file} is empty")
    return text


def tune_gc() -> None:
    """Garbage-collector settings for a long-running hub process (ADR 0002).

    Every message allocates short-lived objects; with the default generation-0 threshold (700)
    the collector ran often enough to take ~10% of the hub's CPU. Everything imported so far
    lives for the whole process, so it is frozen out of every future collection.
    """
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(50_000, gen1, gen2)


def _run_loop(main: Coroutine[Any, Any, T]) -> T:
    import asyncio

    try:
        import uvloop
    except ImportError:  # uvloop is optional (not on Windows)
        return asyncio.run(main)
    return uvloop.run(main)


async def _serve(
    settings: Settings, sock: socket.socket, *, access_log: bool, json_output: bool
) -> int:
    from caucus.hub_server import HubServer
    from caucus.server import build_app, open_hub
    from caucus.web.patience import uvicorn_config

    hub = open_hub(settings)
    tune_gc()
    try:
        await hub.start()  # before serving, so a locked or newer database is a clean error
    except (CaucusError, RuntimeError, OSError) as exc:
        err.print(f"[bold red]error:[/] cannot open the database: {exc}")
        return 2
    try:
        bound_port = sock.getsockname()[1]
        shown_host = f"[{settings.host}]" if ":" in settings.host else settings.host
        url = f"http://{shown_host}:{bound_port}"
        db_shown = settings.db_shown()
        token_file = hub.operator.path
        if json_output:
            # Machine-readable, and likely to end up in a supervisor's log: no token, only
            # where to find it.
            line = {
                "url": url,
                "db": db_shown,
                "version": __version__,
                "operator_token_file": str(token_file) if token_file else None,
            }
            print(json.dumps(line), flush=True)
        else:
            out = Console(soft_wrap=True, highlight=False)
            out.print(f"[bold]Caucus hub {__version__}[/] listening on [cyan]{url}[/]")
            out.print(f"database: {db_shown}")
            where = (
                f"{'generated, ' if hub.operator.created else ''}kept in {token_file}"
                if token_file is not None
                else "the one you configured"
            )
            if sys.stdout.isatty():
                # Like Jupyter: the operator's URL carries the token, in the fragment, which
                # browsers never send to a server. Only to a terminal: never into a log file.
                out.print(f"operator: [cyan]{url}/#token={hub.operator.token}[/]")
                out.print(f"[dim](the token: {where})[/]")
            else:
                out.print(f"operator: {url}/ (sign in with the operator token: {where})")
            out.print(f"[dim]Ctrl-C stops the hub; API reference at {url}/openapi.json[/]")
            sys.stdout.flush()
        server = HubServer(
            uvicorn_config(
                build_app(hub),
                settings,
                log_level=settings.log_level,
                access_log=access_log,
                timeout_graceful_shutdown=5,
            ),
            hub,
        )
        await server.serve(sockets=[sock])
        return 0 if server.started else 1
    finally:
        await hub.stop()


@app.command()
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


@app.command("watch")
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


@app.command()
def version(
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Print the version (of this command; `caucus status` asks the hub for its own)."""
    from caucus.protocol import PROTOCOL_VERSION

    if json_output:
        print(json.dumps({"version": __version__, "protocol": PROTOCOL_VERSION}))
        return
    print(__version__)


@app.command()
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
