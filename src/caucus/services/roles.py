"""Who may do what beyond being an agent: the operator, and an optional read-only observer."""

from __future__ import annotations

from caucus.domain.control import Role
from caucus.ids import hash_token, tokens_equal


class Roles:
    def __init__(self, operator_token: str, observer_token: str | None) -> None:
        if observer_token and observer_token == operator_token:
            raise ValueError("the observer token must differ from the operator token")
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
