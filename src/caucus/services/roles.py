"""Who may do what beyond being an agent: the operator, and an optional read-only observer."""

from __future__ import annotations

from enum import StrEnum

from caucus.domain.control import Role
from caucus.errors import Forbidden, Unauthorized
from caucus.ids import hash_token, tokens_equal
from caucus.storage.base import Store


class Access(StrEnum):
    """What a route needs. Every route declares one (the authorization matrix test checks)."""

    PUBLIC = "public"  # anyone
    ROOM = "room"  # who is here: anyone who could register (no token needed unless an agent
    # key is set), and every valid token; a bad token is refused
    AGENT = "agent"  # a registered agent's token
    VIEWER = "viewer"  # the operator or the observer
    OPERATOR = "operator"  # the operator only


class Roles:
    def __init__(self, store: Store, operator_token: str, observer_token: str | None) -> None:
        if observer_token and observer_token == operator_token:
            raise ValueError("the observer token must differ from the operator token")
        self._store = store
        self._operator = hash_token(operator_token)
        self._observer = hash_token(observer_token) if observer_token else None

    def role_of(self, token: str | None) -> Role | None:
        if not token:
            return None
        digest = hash_token(token)
        # Compare against both, always, so timing does not tell which one matched.
        is_operator = tokens_equal(digest, self._operator)
        is_observer = self._observer is not None and tokens_equal(digest, self._observer)
        if is_operator:
            return Role.OPERATOR
        if is_observer:
            return Role.OBSERVER
        return None

    async def require(self, token: str | None, access: Access) -> Role:
        """The caller's role if it may use a VIEWER or OPERATOR route; else raise."""
        role = self.role_of(token)
        if role is Role.OPERATOR:
            return role
        if role is Role.OBSERVER:
            if access is Access.VIEWER:
                return role
            raise Forbidden("the observer token is read-only: this needs the operator token")
        if not token:
            raise Unauthorized(
                "operator credentials required: send 'Authorization: Bearer <operator token>' "
                "(caucus hub prints where to find it)"
            )
        if await self._store.peer_by_token(hash_token(token)) is not None:
            raise Forbidden("agent tokens never authorize operator actions")
        raise Unauthorized("unknown token: this needs the operator token")
