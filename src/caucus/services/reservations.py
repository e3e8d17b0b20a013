"""File reservations: an agent leases paths and globs of the repository it edits, so the others
working beside it know what not to touch (`domain.reservations` has the matching rules).

Reserving reads what stands and writes what is granted in one unit, so two agents racing for
one file cannot both miss each other. In an advisory room (the default) a conflicting
reservation is granted and the conflicts are reported, holder and expiry; where the room
enforces reservations, a request with any conflict is refused whole (409
`reservation_conflict`, the conflicts listed). A reservation lasts its time to live unless
renewed, and stands only while its holder is here: leaving, being kicked or being reaped voids
it at once, and the hub's maintenance round deletes what is void.
"""

from __future__ import annotations

from collections.abc import Sequence

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.events import ReservationsChanged
from caucus.domain.peers import Peer
from caucus.domain.reservations import (
    MAX_REASON,
    TTL_DEFAULT,
    TTL_MAX,
    TTL_MIN,
    Reservation,
    ReservationConflict,
    ReservationPolicy,
    Reserved,
    blocking,
    conflicts,
    normalized,
    normalized_all,
)
from caucus.errors import CapReservations, InvalidRequest, ReservationsHeld
from caucus.ids import MessageIds
from caucus.services.notifier import Notifier
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos

POLICY_KEY = "reservations"  # in the room's durable state


def _ttl(ttl: float | None) -> float:
    if ttl is None:
        return TTL_DEFAULT
    if not TTL_MIN <= ttl <= TTL_MAX:
        raise InvalidRequest(
            f"ttl is {TTL_MIN:.0f} s to {TTL_MAX:.0f} s (renew a longer one)", field="ttl"
        )
    return ttl


class ReservationService:
    def __init__(self, db: Engine, notifier: Notifier, clock: Clock, settings: Settings) -> None:
        self._db = db
        self._notifier = notifier
        self._clock = clock
        self._settings = settings
        self._ids = MessageIds()

    def _policy(self, r: Repos) -> ReservationPolicy:
        stored = r.room.get(POLICY_KEY, self._settings.reservations)
        try:
            return ReservationPolicy(stored)
        except ValueError:  # a value a newer hub wrote: the setting decides
            return ReservationPolicy(self._settings.reservations)

    async def policy(self) -> ReservationPolicy:
        """What the room does with a conflict now."""
        return await self._db.read(self._policy)

    async def set_policy(self, policy: str) -> ReservationPolicy:
        """The operator's choice, for every hub process sharing the database, from the next
        request on (reservations already granted stand)."""
        try:
            chosen = ReservationPolicy(policy)
        except ValueError:
            names = ", ".join(p.value for p in ReservationPolicy)
            raise InvalidRequest(f"policy is one of {names}", field="policy") from None
        await self._db.write(lambda r: r.room.set(POLICY_KEY, chosen.value))
        self._changed("policy", None)
        return chosen

    async def reserve(
        self,
        peer: Peer,
        paths: Sequence[str],
        *,
        exclusive: bool = True,
        ttl: float | None = None,
        reason: str | None = None,
    ) -> Reserved:
        """Reserve `paths` (paths or globs) for `ttl` seconds. A pattern the peer holds
        already is taken again, as now asked, keeping its id."""
        patterns = normalized_all(paths)
        seconds = _ttl(ttl)
        if reason is not None and len(reason) > MAX_REASON:
            raise InvalidRequest(f"reason is at most {MAX_REASON} characters", field="reason")
        now = self._clock.now()
        cap = self._settings.reservations_per_peer_max

        def unit(r: Repos) -> Reserved:
            policy = self._policy(r)
            found = conflicts(patterns, exclusive, r.reservations.live(now), peer.name)
            if found and policy is ReservationPolicy.ENFORCE:
                raise _held(found, now)
            mine = {m.pattern: m for m in r.reservations.of_holder(peer.id, now)}
            fresh = [p for p in patterns if p not in mine]
            if len(mine) + len(fresh) > cap:
                raise CapReservations(
                    f"you may hold {cap} reservations at once; you hold {len(mine)}: "
                    "release what you are done with"
                )
            granted = []
            for pattern in patterns:
                held = mine.get(pattern)
                made = Reservation(
                    held.id if held else "r_" + self._ids.next().removeprefix("m_"),
                    peer.name,
                    pattern,
                    exclusive,
                    reason,
                    held.created_at if held else now,
                    now + seconds,
                )
                if held:
                    r.reservations.update(peer.id, made)
                else:
                    r.reservations.insert(peer.id, made)
                granted.append(made)
            return Reserved(granted, found, policy)

        done = await self._db.write(unit)
        self._changed("reserved", peer.name)
        return done

    async def release(
        self,
        peer: Peer,
        *,
        ids: Sequence[str] = (),
        paths: Sequence[str] = (),
        everything: bool = False,
    ) -> list[Reservation]:
        """Release the peer's reservations named by id or by pattern (or all of them); what
        was released. Naming one the peer does not hold releases nothing and is no error."""
        if not (ids or paths or everything):
            raise InvalidRequest(
                "name the reservations to release (ids or paths), or all", field="ids"
            )
        patterns = {normalized(p) for p in paths}
        wanted = set(ids)
        now = self._clock.now()

        def unit(r: Repos) -> list[Reservation]:
            released = []
            for held in r.reservations.of_holder(peer.id, now):
                named = everything or held.id in wanted or held.pattern in patterns
                if named and r.reservations.delete(peer.id, held.id):
                    released.append(held)
            return released

        released = await self._db.write(unit)
        if released:
            self._changed("released", peer.name)
        return released

    async def renew(
        self, peer: Peer, *, ids: Sequence[str] = (), ttl: float | None = None
    ) -> list[Reservation]:
        """Extend the peer's live reservations (those named, or all) to `ttl` from now."""
        seconds = _ttl(ttl)
        wanted = set(ids)
        now = self._clock.now()

        def unit(r: Repos) -> list[Reservation]:
            renewed = []
            for held in r.reservations.of_holder(peer.id, now):
                if wanted and held.id not in wanted:
                    continue
                if r.reservations.renew(peer.id, held.id, now + seconds, now):
                    held.expires_at = now + seconds
                    renewed.append(held)
            return renewed

        renewed = await self._db.write(unit)
        if renewed:
            self._changed("renewed", peer.name)
        return renewed

    async def listing(self, holder: str | None = None) -> list[Reservation]:
        """What stands, oldest first (one holder's, if named)."""
        now = self._clock.now()
        found = await self._db.read(lambda r: r.reservations.live(now))
        return [r for r in found if holder is None or r.holder == holder]

    async def blocking(
        self, paths: Sequence[str], holder: str | None
    ) -> list[tuple[str, Reservation]]:
        """For each of `paths` (files, relative to the root) another holder's exclusive
        reservation covers: (path, reservation). What the pre-commit guard asks."""
        # Literal file names, as git lists them: any name git allows is checked, not judged
        # by the rules a pattern must follow.
        files = [p.removeprefix("./") for p in paths if p]
        return blocking(files, await self.listing(), holder)

    async def sweep(self) -> None:
        """Delete expired reservations and those whose holder is no longer here."""
        now = self._clock.now()
        if await self._db.write(lambda r: r.reservations.sweep(now)):
            self._changed("swept", None)

    def _changed(self, change: str, holder: str | None) -> None:
        self._notifier.emit(ReservationsChanged(self._clock.now(), change, holder))


def _held(found: list[ReservationConflict], now: float) -> ReservationsHeld:
    """The refusal where the room enforces reservations: what met whose, for how long."""
    met = "; ".join(
        f"{c.pattern} meets {c.holder}'s {'exclusive' if c.exclusive else 'shared'} "
        f"{c.held} ({max(0, int((c.expires_at - now) // 60))} min left)"
        for c in found[:5]
    )
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return ReservationsHeld(
        f"nothing reserved: {met}{more}; ask the holder, or wait for the release",
        conflicts=[
            {
                "pattern": c.pattern,
                "holder": c.holder,
                "held": c.held,
                "exclusive": c.exclusive,
                "expires_at": c.expires_at,
            }
            for c in found
        ],
    )
