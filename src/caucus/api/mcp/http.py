"""`/mcp`: the tool catalog over Streamable HTTP, in the hub process, on both protocol eras.

Who a call acts as, in this order:
- `Authorization: Bearer <agent token>`: that agent, under any protocol (a client configured
  with a token);
- the `Mcp-Session-Id` of a handshake-era session (2025-06-18, 2025-11-25): the identity its
  `join` obtained, kept by the session's port;
- a `handle` argument (2026-07-28, which has no session): the identity the state handle that
  `join` minted stands for. `join` always returns one, so a client whose session was lost
  can come back as the same peer with `join(handle=...)`.

A session that ends (the client deletes it, or it idles past `mcp_session_idle`) tells the hub
at once: its peer shows offline and stays resumable for the grace period.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from caucus.api.mcp.call_lane import CallLane
from caucus.api.mcp.inbox import InboxResources
from caucus.api.mcp.local_port import LocalPort
from caucus.api.mcp.sessions import SESSION_HEADER, Sessions
from caucus.domain.names import name_from
from caucus.domain.peers import Peer
from caucus.errors import CapStreams, CaucusError
from caucus.ids import hash_token
from caucus.mcp.ports import HubPort
from caucus.mcp.results import WatchCommand
from caucus.mcp.server import Context, ToolServer, follows_lines, is_modern
from caucus.mcp.tool_call import Call
from caucus.mcp.tools import Catalog
from caucus.mcp.watch import Session, by_session_file, by_ticket, write_session
from caucus.services.holds import Hold, HoldKind
from caucus.services.hub import Hub
from caucus.web.bearer import parse_bearer
from caucus.web.context import NotComposed, served, socket_url
from caucus.web.errors import caucus_error_response, error_response, unexpected_error_body
from caucus.wire.headers import AGENT_KEY_HEADER
from caucus.wire.room import Limits
from caucus.wire.verbs import identity

log = logging.getLogger(__name__)

MAX_PORTS = 10_000  # identities remembered by token or handle; the least recently used go
# The request headers a call reads (Starlette's `Headers` would decode every one per lookup).
_READ = frozenset({b"authorization", b"mcp-session-id", AGENT_KEY_HEADER.lower().encode()})
MAX_URLS = 64  # ways of reaching the hub remembered (scheme, Host, address, root path)


class McpEndpoint:
    """The ASGI app behind `/mcp`, and the ports of the identities it serves."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._sessions: dict[str, LocalPort] = {}
        self._keyed: OrderedDict[bytes, LocalPort] = OrderedDict()
        self._urls: dict[tuple[Any, ...], str | None] = {}
        self._streams: dict[str, _Stream] = {}  # GET streams of sessions not joined yet
        self.inbox = InboxResources(hub, self._peer_of)
        catalog = Catalog(
            watch_for=self._watch_for,
            inbox_uri=self._inbox_uri,
            on_join=self._joined,
            on_leave=self._left,
        )
        self.tools = ToolServer(
            catalog,
            call_for=self._call_for,
            limits_for=self._limits,
            default_name=client_name,
            sessionless=lambda ctx: is_modern(ctx) and _bearer(ctx) is None,
            resources=self.inbox,
        )
        settings = hub.settings
        hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"]
        hosts += [h if ":" in h else f"{h}:*" for h in settings.allowed_hosts]
        origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
        origins += list(settings.allowed_origins)
        self._manager = Sessions(
            app=self.tools.server,
            security_settings=TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=hosts,
                allowed_origins=origins,
            ),
            session_idle_timeout=settings.mcp_session_idle,
            max_request_body_size=settings.max_body_bytes,
            # Joined sessions are bounded by the peers they act as (a few each); unjoined ones
            # by their own cap, which ends the oldest rather than refusing.
            max_sessions=4 * settings.peers_max + settings.mcp_unjoined_max,
            on_end=self._ended,
            unjoined_max=settings.mcp_unjoined_max,
            unjoined_idle=settings.mcp_unjoined_idle,
            monotonic=hub.clock.monotonic,
        )
        self.calls = CallLane(
            self._manager,
            self.tools,
            max_body=settings.max_body_bytes,
            enabled=settings.mcp_call_lane,
        )

    def session_state(self, session_id: str) -> str | None:
        """ "joined", "unjoined" or None (no such session open), without any I/O."""
        return self._manager.state(session_id)

    @property
    def open_sessions(self) -> int:
        """Handshake-era sessions open now, joined or not."""
        return self._manager.open_sessions

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        try:
            async with self._manager.run():
                yield
        finally:
            self.inbox.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            served(scope)
        except NotComposed:  # only behind the composition root's guard
            log.error("/mcp was reached without caucus.server.build_app; refused")
            await error_response(500, unexpected_error_body())(scope, receive, send)
            return
        rest = await self.calls.serve(scope, receive, send)
        if rest is None:
            return
        if scope["method"] == "GET":
            await self._stream(scope, rest, send)
        else:  # not a tool call the lane takes: the SDK's
            await self._manager.handle_request(scope, rest, send)

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A session's stream of server messages (GET): one of the things its agent holds
        open (`services.holds`), ended when the agent is gone for good. A stream opened before
        its session joined is held from the join on (`_joined`)."""
        owner = await self._owner(scope)
        hold = None
        if owner is not None:
            try:
                hold = self.hub.holds.take(owner, HoldKind.MCP)
            except CapStreams as exc:
                await caucus_error_response(exc)(scope, receive, send)
                return
        session_id = _header(scope, SESSION_HEADER)
        stream = _Stream(session_id, self._manager)
        if hold is not None:
            stream.held(hold)
        elif session_id is not None:
            self._streams[session_id] = stream
        try:
            await self._manager.handle_request(scope, receive, send)
        finally:
            if session_id is not None and self._streams.get(session_id) is stream:
                del self._streams[session_id]
            stream.release()

    async def _owner(self, scope: Scope) -> int | None:
        """The agent a GET on `/mcp` comes from: its bearer token's, or its joined
        session's; None for a session that has not joined (or no credential at all)."""
        token = _header(scope, b"authorization")
        session_id = _header(scope, SESSION_HEADER)
        try:
            bearer = parse_bearer(token)
            if bearer is not None:
                return (await self.hub.principals.agent(bearer)).id
            port = self._sessions.get(session_id) if session_id is not None else None
            peer = await port.peer() if port is not None else None
        except CaucusError:
            return None
        return None if peer is None else peer.id

    # --- who a call is ------------------------------------------------------------------------
    async def _call_for(self, ctx: Context, handle: str | None) -> Call:
        headers = _headers(ctx)
        token = parse_bearer(headers.get("authorization"))
        session_id = headers.get("mcp-session-id")
        if token is not None:
            port = await self._known(b"t" + hash_token(token), LocalPort(self.hub, token=token))
            if session_id is not None:  # a proven credential: the session is an agent's
                self._manager.promote(session_id)
        elif session_id is not None:
            port = self._sessions.get(session_id) or LocalPort(self.hub)
            self._sessions[session_id] = port
            port.session_id = session_id
        elif handle is not None:
            port = await self._known(b"h" + hash_token(handle), LocalPort(self.hub, handle=handle))
        else:
            port = LocalPort(self.hub)  # a session-less newcomer: `join` gives it a handle
        port.offer_agent_key(headers.get(AGENT_KEY_HEADER.lower()))
        client = getattr(ctx.request, "client", None)
        port.source = client.host if client is not None else None
        port.hub_url = self._hub_url(ctx.request)
        scope = getattr(ctx.request, "scope", None)
        if isinstance(scope, dict):
            port.socket_url = socket_url(scope, port.hub_url or "")
        return Call(
            port,
            default_name=client_name(ctx),
            agent_key=port.agent_key,
            hub_url=port.hub_url,
            local=_loopback(port.source),
            follows=follows_lines(ctx),
        )

    def _hub_url(self, request: object) -> str | None:
        """The hub as the client reaches it, worked out once per way of reaching it."""
        scope = getattr(request, "scope", None)
        if not isinstance(scope, dict):
            return None
        host = next((v for k, v in scope.get("headers", ()) if k == b"host"), None)
        key = (
            scope.get("scheme"),
            host,
            scope.get("server"),
            scope.get("app_root_path", scope.get("root_path")),
        )
        if key not in self._urls:
            if len(self._urls) >= MAX_URLS:
                self._urls.clear()
            self._urls[key] = str(getattr(request, "base_url", "")).rstrip("/") or None
        return self._urls[key]

    async def _known(self, key: bytes, fresh: LocalPort) -> LocalPort:
        """The port remembered under `key`; a new one only once its credential is proven, so
        unknown tokens or handles cannot crowd out the real ones."""
        port = self._keyed.get(key)
        if port is not None:
            self._keyed.move_to_end(key)
            return port
        await fresh.identify()
        self._remember(key, fresh)
        return fresh

    def _remember(self, key: bytes, port: LocalPort) -> None:
        self._keyed[key] = port
        if len(self._keyed) > MAX_PORTS:
            self._keyed.popitem(last=False)

    async def _joined(self, port: HubPort) -> None:
        if isinstance(port, LocalPort) and port.session_id is not None:
            self._manager.promote(port.session_id)
            await self._hold_stream(port)
            await self.inbox.list_changed(port.session_id)
        if isinstance(port, LocalPort) and port.handle is not None:
            key = b"h" + hash_token(port.handle)
            if key not in self._keyed:
                self._remember(key, port)

    async def _hold_stream(self, port: LocalPort) -> None:
        """The session's stream, opened before it joined, is its agent's from now on (ended
        if the agent already holds as many as it may: the client opens it again later)."""
        stream = self._streams.pop(port.session_id or "", None)
        peer = await port.peer()
        if stream is None or peer is None:
            return
        try:
            stream.held(self.hub.holds.take(peer.id, HoldKind.MCP))
        except CapStreams:
            stream.end()

    async def _left(self, port: HubPort) -> None:
        for key in [k for k, p in self._keyed.items() if p is port]:
            del self._keyed[key]
        if isinstance(port, LocalPort):
            await self.inbox.list_changed(port.session_id)
        if isinstance(port, LocalPort) and port.watch_file is not None:
            port.watch_file.unlink(missing_ok=True)
            port.watch_file = None

    async def _peer_of(self, ctx: Context) -> Peer | None:
        """Who a resource request comes from (its session or bearer token), if anyone."""
        port = (await self._call_for(ctx, None)).port
        try:
            return await port.peer() if isinstance(port, LocalPort) else None
        except CaucusError:
            return None

    async def _inbox_uri(self, port: HubPort) -> str | None:
        peer = await port.peer() if isinstance(port, LocalPort) else None
        return self.inbox.uri(peer) if peer is not None else None

    async def _watch_for(self, call: Call, port: HubPort) -> WatchCommand | None:
        """A host on this machine gets a 0600 file holding a watch key; one elsewhere, which
        cannot read this machine's files, a single-use ticket."""
        if port.name is None:
            return None
        if call.local and self.hub.settings.watch_files:
            key = await port.mint_watch_key()
            url = call.hub_url or f"http://127.0.0.1:{self.hub.settings.port}"
            path = self._session_file(port.name)
            write_session(path, Session(url, port.name, key.key))
            if isinstance(port, LocalPort):
                port.watch_file = path
            return by_session_file(path, follow=call.follows)
        ticket = await port.verb(identity.MINT_WATCH_TICKET)
        return by_ticket(ticket.command, self.hub.settings.watch_ticket_ttl, follow=call.follows)

    def _session_file(self, name: str) -> Path:
        """One per peer, beside the hub's database (as private as it is), or in the hub's data
        folder when the database is a server."""
        db = self.hub.db_path
        folder = db.parent if db else self.hub.settings.data_dir()
        return folder / "watchers" / f"{name}.session"

    async def _ended(self, session_id: str) -> None:
        self.inbox.ended(session_id)
        port = self._sessions.pop(session_id, None)
        if port is None:
            return
        try:
            await port.offline()
        except Exception:  # the hub may be stopping: the reaper covers what is missed here
            log.warning("could not mark the peer of an ended MCP session offline", exc_info=True)

    async def _limits(self, _: Context) -> Limits:
        return Limits.of(self.hub.settings, self.hub.control.state())


class _Stream:
    """A session's GET stream being served, and the hold it takes once its agent is known:
    the agent being gone ends its session, and with it the stream."""

    __slots__ = ("_ending", "_manager", "hold", "session_id")

    def __init__(self, session_id: str | None, manager: Sessions) -> None:
        self.session_id = session_id
        self._manager = manager
        self._ending: asyncio.Task[None] | None = None
        self.hold: Hold | None = None

    def held(self, hold: Hold) -> None:
        self.hold = hold
        hold.ended.add_done_callback(lambda _: self.end())

    def end(self) -> None:
        if self.session_id is not None and self._ending is None:
            self._ending = asyncio.ensure_future(self._manager.end(self.session_id))

    def release(self) -> None:
        if self.hold is not None:
            self.hold.release()


def _header(scope: Scope, name: bytes) -> str | None:
    return next((v.decode("latin-1") for k, v in scope["headers"] if k == name), None)


@functools.lru_cache(maxsize=1024)
def _loopback(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name (a test client): not an address this machine can vouch for
        return False


def _headers(ctx: Context) -> Any:
    request = ctx.request
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict) and "headers" in scope:  # the ones a call reads, in one pass
        found: dict[str, str] = {}
        for key, value in scope["headers"]:
            if key in _READ:  # the first of a repeated one, as Starlette's `get` gives
                found.setdefault(key.decode("latin-1"), value.decode("latin-1"))
        return found
    return getattr(request, "headers", None) or {}


def _bearer(ctx: Context) -> str | None:
    header = _headers(ctx).get("authorization")
    return header if header else None


def client_name(ctx: Context) -> str | None:
    """The name a client gave itself (`clientInfo.name`), as a peer name: join's default."""
    params = ctx.session.client_params
    if params is None or not params.client_info.name:
        return None
    return _name_from(params.client_info.name)


@functools.lru_cache(maxsize=256)
def _name_from(client: str) -> str | None:
    return name_from(client)
