"""`caucus hub`: the server, on a socket bound before anything slow loads."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from caucus.cli.common import _fail, _run_loop

if TYPE_CHECKING:
    pass

T = TypeVar("T")


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
    a2a_front: Annotated[
        str | None,
        typer.Option(help="the agent a message to the room's A2A card goes to (default: the one)"),
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
            a2a_front=a2a_front,
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
        from caucus.cli.hub_server import serve

        code = _run_loop(serve(settings, sock, access_log=access_log, json_output=json_output))
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
