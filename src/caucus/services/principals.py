"""Who a credential is: the one place that decides, for every transport.

A bearer token is an agent's (from registering), the operator's, the observer's, or nobody's;
an MCP state handle stands for one agent. FastAPI routes, the hot lane and `/mcp` all ask
here, so a token means the same thing whichever door it comes through.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from caucus.config import Settings
from caucus.domain.control import Access, Role
from caucus.domain.names import check_peer_name
from caucus.domain.peers import Peer, Registration, ended
from caucus.errors import Forbidden, Hint, Unauthorized
from caucus.ids import hash_token, tokens_equal
from caucus.services.registry import Registry
from caucus.services.roles import Roles
from caucus.services.watchers import KEY_PREFIX, Watchers
from caucus.storage.engine import Engine


def agent_key_ok(settings: Settings, key: str | None) -> bool:
    """Whether `key` opens a hub that requires an agent key (always true when none is set)."""
    required = settings.agent_key
    if not required:
        return True
    return bool(key) and tokens_equal(hash_token(key or ""), hash_token(required))


class PrincipalKind(StrEnum):
    AGENT = "agent"
    OPERATOR = "operator"
    OBSERVER = "observer"
    ANONYMOUS = "anonymous"


@dataclass(frozen=True, slots=True)
class Principal:
    kind: PrincipalKind
    peer: Peer | None = None  # for an agent


ANONYMOUS = Principal(PrincipalKind.ANONYMOUS)


class Principals:
    def __init__(
        self,
        db: Engine,
        registry: Registry,
        roles: Roles,
        settings: Settings,
        watchers: Watchers,
    ) -> None:
        self._db = db
        self._registry = registry
        self._roles = roles
        self._settings = settings
        self._watchers = watchers

    async def resolve(self, token: str | None) -> Principal:
        """Who `token` is. No token is anonymous; an unknown one is refused."""
        if not token:
            return ANONYMOUS
        role = self._roles.role_of(token)
        if role is Role.OPERATOR:
            return Principal(PrincipalKind.OPERATOR)
        if role is Role.OBSERVER:
            return Principal(PrincipalKind.OBSERVER)
        try:
            return Principal(PrincipalKind.AGENT, await self._authenticate(token))
        except Unauthorized:
            await self._refuse_watch_key(token)
            raise

    async def agent(self, token: str | None) -> Peer:
        """The agent `token` belongs to (revived if it was away). Operator and observer tokens
        are refused: they never act as an agent."""
        try:
            return await self._authenticate(token)
        except Unauthorized:
            # Checked only on failure, so the hot path pays for one lookup, not two.
            if token and self._roles.role_of(token) is not None:
                raise Forbidden(
                    "the operator and observer tokens do not act as an agent: agents register "
                    "for their own",
                    hint=Hint.REGISTER,
                ) from None
            await self._refuse_watch_key(token)
            raise

    async def watcher(self, token: str | None) -> Peer:
        """The agent a watch key waits for. Any other credential is refused: a watcher's key
        is the only thing `caucus watch` holds, and it holds nothing else."""
        if token and token.startswith(KEY_PREFIX):
            found = await self._watchers.key_holder(token)
            unknown = "unknown watch key: call join, then watch_command, for a new watcher"
            return await self._registry.present(_standing(found, unknown))
        if token and (self._roles.role_of(token) is not None or await self._is_agent_token(token)):
            raise Forbidden(
                "this route takes a watch key (caucus watch holds one), not a token: an agent "
                "calls GET /receive"
            )
        raise Unauthorized(
            "missing or unknown watch key: call join, then watch_command, for a new watcher",
            hint=Hint.REGISTER,
        )

    async def _refuse_watch_key(self, token: str | None) -> None:
        """A valid watch key where an agent's token is needed is the wrong kind (403)."""
        if token and token.startswith(KEY_PREFIX):
            found = await self._watchers.key_holder(token)
            if found is None or found.state.terminal:
                return
            raise Forbidden("a watch key only waits for messages (GET /watch): it acts as nobody")

    async def register(
        self,
        *,
        name: str,
        token: str | None = None,
        skills: Any = None,
        description: str | None = None,
        protocol_version: int | None = None,
        agent_key: str | None = None,
        source: str | None = None,
    ) -> Registration:
        """Join as `name` (the hub's agent key first, where it asks for one); with `token`,
        come back as the identity it stands for (renamed to `name`) instead."""
        if not agent_key_ok(self._settings, agent_key):
            raise Unauthorized(
                "this hub requires an agent key to register (ask the hub's operator for it)",
                hint=Hint.AGENT_KEY,
            )
        returning = None
        if token:
            check_peer_name(name)  # a bad name is the caller's first mistake to hear of
            peer = await self._registry.by_token(hash_token(token))
            if peer is None:
                raise Unauthorized(
                    "unknown or replaced token: register without a token for a new identity",
                    hint=Hint.REGISTER,
                )
            if peer.state.terminal:
                raise Unauthorized(
                    ended(peer) + "; register without a token for a new identity",
                    hint=Hint.REGISTER,
                )
            returning = (token, peer)
        return await self._registry.register(
            name=name,
            skills=skills,
            description=description,
            protocol_version=protocol_version,
            source=source,
            returning=returning,
        )

    async def agent_by_handle(self, handle: str) -> Peer:
        """The agent an MCP state handle stands for, like `agent` for a token."""
        return await self._registry.present(await self._holder_of_handle(handle))

    async def redeem(self, ticket: str) -> tuple[Peer, str]:
        """Spend a watch ticket: its agent (revived if away) and the watch key that replaces
        it."""
        found, key = await self._watchers.redeem(ticket)
        return await self._registry.present(self._registry.adopt(found)), key

    async def holder(self, *, token: str | None = None, handle: str | None = None) -> Peer:
        """Who a token or handle stands for, without counting as a call: asking who someone is
        does not bring them back (their next call or join does)."""
        if token is not None:
            if self._roles.role_of(token) is not None:
                raise Forbidden("the operator and observer tokens do not act as an agent")
            found = await self._registry.by_token(hash_token(token))
            return _standing(found, "unknown or replaced token")
        if handle is not None:
            return await self._holder_of_handle(handle)
        raise Unauthorized("not joined yet", hint=Hint.REGISTER)

    async def room(self, token: str | None, agent_key: str | None = None) -> Principal:
        """Reading who is here: anyone who could register (so, with an agent key set, who
        holds it), and every valid token."""
        principal = await self.resolve(token)
        if principal.kind is PrincipalKind.ANONYMOUS and not agent_key_ok(
            self._settings, agent_key
        ):
            raise Unauthorized(
                "this hub requires an agent key: register with it, then use your token",
                hint=Hint.AGENT_KEY,
            )
        return principal

    async def role(self, token: str | None, access: Access) -> Role:
        """The caller's role for a VIEWER or OPERATOR route; else refuse, saying why."""
        role = self._roles.role_of(token)
        if role is Role.OPERATOR:
            return role
        if role is Role.OBSERVER:
            if access is Access.VIEWER:
                return role
            raise Forbidden("the observer token is read-only: this needs the operator token")
        if not token:
            raise Unauthorized(
                "operator credentials required: send the operator token (caucus hub prints "
                "where to find it)"
            )
        if await self._is_agent_token(token):
            raise Forbidden("agent tokens never authorize operator actions")
        await self._refuse_watch_key(token)
        raise Unauthorized("unknown token: this needs the operator token")

    async def _authenticate(self, token: str | None) -> Peer:
        """The agent a bearer token stands for, revived if it was away and seen now. Refuses a
        missing, unknown, replaced or ended token."""
        if not token:
            raise Unauthorized(
                "missing credentials: an agent sends the token it got when it registered",
                hint=Hint.REGISTER,
            )
        digest = hash_token(token)
        peer = _standing(await self._registry.by_token(digest), "unknown or replaced token")
        if not tokens_equal(peer.token_hash, digest):  # constant-time, belt and braces
            raise Unauthorized("unknown or replaced token", hint=Hint.REGISTER)
        return await self._registry.present(peer)

    async def _holder_of_handle(self, handle: str) -> Peer:
        found = await self._registry.by_handle(hash_token(handle))
        return _standing(found, "unknown handle", then=": join again for a new one")

    async def _is_agent_token(self, token: str) -> bool:
        digest = hash_token(token)
        return await self._db.read(lambda r: r.peers.by_token(digest)) is not None


def _standing(peer: Peer | None, unknown: str, then: str = "") -> Peer:
    """The peer a credential found, if it still stands; else why not (401)."""
    if peer is None or peer.state.terminal:
        what = ended(peer) if peer is not None else unknown
        raise Unauthorized(what + then, hint=Hint.REGISTER)
    return peer
