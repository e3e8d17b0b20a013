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


@dataclass(slots=True)
class FloorBook:
    """Every scope's floor, and what its changes must tell the room: the talking stick's rules,
    applied without I/O. A change records `notices` (a floor and the sentence announcing it)
    and `changed` (the floors whose state moved); the service routes and emits them after."""

    floors: dict[str, Floor] = field(default_factory=dict)
    notices: list[tuple[Floor, str]] = field(default_factory=list)
    changed: list[Floor] = field(default_factory=list)

    def get(self, scope: str) -> Floor:
        return self.floors.setdefault(scope, Floor(scope))

    def holder(self, scope: str) -> str | None:
        floor = self.floors.get(scope)
        return floor.holder if floor is not None else None

    def busy(self) -> list[Floor]:
        return [f.copy() for f in self.floors.values() if f.holder or f.hands]

    def mark(self, floor: Floor) -> None:
        self.changed.append(floor.copy())

    def give(self, floor: Floor, name: str, now: float, reason: str | None, said: str) -> None:
        """`name` holds the floor now; `said` is the sentence that tells the room."""
        floor.holder, floor.since, floor.reason = name, now, reason
        if name in floor.hands:
            floor.hands.remove(name)
        self.notices.append((floor.copy(), said))

    def advance(self, floor: Floor, now: float, why: str) -> None:
        """To the first raised hand, or free; `why` says what became of the holder ("ann
        passed it", "ann is gone")."""
        if floor.hands:
            name = floor.hands.pop(0)
            self.give(floor, name, now, None, f"{name} has the floor in {floor.scope} ({why})")
        else:
            self.release(floor, why)

    def release(self, floor: Floor, why: str) -> None:
        floor.holder = floor.since = floor.reason = None
        self.notices.append((floor.copy(), f"the floor in {floor.scope} is free ({why})"))

    def clear_all(self, why: str) -> None:
        for floor in self.floors.values():
            busy = floor.holder is not None or bool(floor.hands)
            floor.hands.clear()
            if floor.holder is not None:
                self.release(floor, why)
            if busy:
                self.mark(floor)

    def close(self, scope: str) -> None:
        """A closed channel has no floor: its holder and its raised hands go, and a reopened
        channel starts with a free floor."""
        floor = self.floors.pop(scope, None)
        if floor is None or (floor.holder is None and not floor.hands):
            return
        # No sentence in the channel: it is closed, and its members were told so.
        floor.hands.clear()
        floor.holder = floor.since = floor.reason = None
        self.mark(floor)

    def gone(self, name: str, scopes: list[str] | None, now: float) -> None:
        """`name` can no longer use a floor (in `scopes`, or anywhere): its hands go down
        and a floor it held passes on."""
        for floor in list(self.floors.values()):
            if scopes is not None and floor.scope not in scopes:
                continue
            involved = name in floor.hands or floor.holder == name
            if name in floor.hands:
                floor.hands.remove(name)
            if floor.holder == name:
                self.advance(floor, now, f"{name} is gone")
            if involved:
                self.mark(floor)

    # --- as stored (a database shared by several hub processes keeps the book) -------------
    def records(self) -> list[dict[str, object]]:
        return [
            {
                "scope": f.scope,
                "holder": f.holder,
                "since": f.since,
                "reason": f.reason,
                "hands": list(f.hands),
            }
            for f in self.floors.values()
            if f.holder or f.hands
        ]

    @classmethod
    def of_records(cls, records: object) -> FloorBook:
        book = cls()
        if isinstance(records, list):
            for r in records:
                if isinstance(r, dict) and isinstance(r.get("scope"), str):
                    hands = [h for h in r.get("hands") or [] if isinstance(h, str)]
                    book.floors[r["scope"]] = Floor(
                        r["scope"], r.get("holder"), r.get("since"), r.get("reason"), hands
                    )
        return book
