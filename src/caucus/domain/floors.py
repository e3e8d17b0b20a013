"""The talking stick: who holds the floor of a scope (`all` or a `#channel`), who waits."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from caucus.domain.names import BROADCAST, check_channel_name


class FloorAction(StrEnum):
    TAKE = "take"
    PASS = "pass"  # noqa: S105 - the floor is passed on, no password here
    DROP = "drop"
    RAISE = "raise"
    LOWER = "lower"
    STATUS = "status"


@dataclass(slots=True)
class Floor:
    scope: str
    holder: str | None = None
    since: float | None = None
    reason: str | None = None
    hands: list[str] = field(default_factory=list)

    def copy(self) -> Floor:
        """A snapshot that later changes to this floor do not touch."""
        return Floor(self.scope, self.holder, self.since, self.reason, list(self.hands))


def parse_scope(scope: str) -> str:
    return BROADCAST if scope == BROADCAST else check_channel_name(scope)
