"""File reservations on the wire: what an agent holds, and where it meets another's."""

from __future__ import annotations

from pydantic import Field

from caucus.domain.reservations import Reservation, ReservationConflict, ReservationPolicy
from caucus.wire.fields import Wire, closed


class ReservationInfo(Wire):
    reservation_id: str
    holder: str
    pattern: str
    exclusive: bool
    reason: str | None
    created_at: float
    expires_at: float

    @classmethod
    def of(cls, r: Reservation) -> ReservationInfo:
        return cls.model_construct(
            reservation_id=r.id,
            holder=r.holder,
            pattern=r.pattern,
            exclusive=r.exclusive,
            reason=r.reason,
            created_at=r.created_at,
            expires_at=r.expires_at,
        )


class ReservationConflictInfo(Wire):
    pattern: str  # as asked
    holder: str
    held: str  # the holder's pattern
    exclusive: bool  # the holder's reservation
    expires_at: float

    @classmethod
    def of(cls, c: ReservationConflict) -> ReservationConflictInfo:
        return cls.model_construct(
            pattern=c.pattern,
            holder=c.holder,
            held=c.held,
            exclusive=c.exclusive,
            expires_at=c.expires_at,
        )


class ReservationList(Wire):
    """Reservations: those granted (with the conflicts found), released, renewed, or that
    stand, as the call says."""

    reservations: list[ReservationInfo]
    conflicts: list[ReservationConflictInfo] = Field(default_factory=list)
    policy: str = closed(ReservationPolicy, "advisory: conflicts are granted and reported")

    @classmethod
    def of(
        cls,
        reservations: list[Reservation],
        policy: ReservationPolicy,
        conflicts: list[ReservationConflict] | None = None,
    ) -> ReservationList:
        return cls.model_construct(
            reservations=[ReservationInfo.of(r) for r in reservations],
            conflicts=[ReservationConflictInfo.of(c) for c in conflicts or []],
            policy=policy.value,
        )


class ReservationPolicyInfo(Wire):
    policy: str = closed(ReservationPolicy, "advisory: conflicts are granted and reported")


class Blocked(Wire):
    """A file another agent's exclusive reservation covers (the pre-commit guard's finding)."""

    path: str
    reservation: ReservationInfo


class BlockedList(Wire):
    blocked: list[Blocked]

    @classmethod
    def of(cls, found: list[tuple[str, Reservation]]) -> BlockedList:
        return cls.model_construct(
            blocked=[
                Blocked.model_construct(path=p, reservation=ReservationInfo.of(r)) for p, r in found
            ]
        )
