"""The job board: work posted for whoever can take it.

Posting announces the offer (under the poster's announcement caps; refused, no offer). Peers
claim; the poster selects one claimant, who receives the payload as a task threaded under the
offer, or withdraws; every other claimant is told. The task completing completes the offer; its
failing re-opens it (or lets it expire past its TTL). Open offers expire at their TTL.
"""

from __future__ import annotations

from typing import Any

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.messages import MessageKind, NewMessage, SystemSender
from caucus.domain.offers import OFFER_STATES, Offer
from caucus.domain.peers import Peer, normalize_skills
from caucus.errors import InvalidRequest
from caucus.ids import MessageIds
from caucus.services.announcements import Announcements
from caucus.services.delivery import DeliveryService
from caucus.storage.base import Store

MIN_TTL, MAX_TTL, DEFAULT_TTL = 60.0, 72 * 3600.0, 24 * 3600.0
MAX_NOTE = 500


class OfferService:
    def __init__(
        self,
        store: Store,
        delivery: DeliveryService,
        announcements: Announcements,
        clock: Clock,
        settings: Settings,
    ) -> None:
        self._store = store
        self._delivery = delivery
        self._announcements = announcements
        self._clock = clock
        self._settings = settings
        self._ids = MessageIds()

    def _notice(
        self,
        sender: Peer | None,
        to: str,
        kind: MessageKind,
        text: str,
        offer: Offer,
        **meta: Any,
    ) -> NewMessage:
        return NewMessage(
            id=self._delivery.new_id(),
            ts=self._clock.now(),
            sender_id=sender.id if sender else None,
            sender=sender.name if sender else SystemSender.HUB,
            to=to,
            kind=kind,
            content=text,
            meta={"offer_id": offer.id, **meta},
            thread=offer.id,
        )

    async def post(
        self,
        peer: Peer,
        payload: str,
        *,
        subject: str | None = None,
        required_skills: Any = None,
        ttl_seconds: float | None = None,
    ) -> Offer:
        self._announcements.check(payload, subject)
        skills = normalize_skills(required_skills) if required_skills is not None else []
        ttl = min(max(ttl_seconds if ttl_seconds is not None else DEFAULT_TTL, MIN_TTL), MAX_TTL)
        self._delivery.check_can_send(peer)
        now = self._clock.now()
        offer_id = "o_" + self._ids.next().removeprefix("m_")
        meta: dict[str, Any] = {"offer_id": offer_id, "expires_at": now + ttl}
        if subject:
            meta["subject"] = subject
        if skills:
            meta["required_skills"] = [s["id"] for s in skills]
        announcement = NewMessage(
            id=self._delivery.new_id(),
            ts=now,
            sender_id=peer.id,
            sender=peer.name,
            to="all",
            kind=MessageKind.ANNOUNCE,
            content=payload,
            meta=meta,
            thread=offer_id,
            joins_channel=False,
        )
        offer, outcome = await self._store.create_offer(
            offer_id=offer_id,
            poster_id=peer.id,
            announcement=announcement,
            subject=subject,
            payload=payload,
            required_skills=skills,
            now=now,
            expires_at=now + ttl,
            max_open=self._settings.open_offers_max,
            min_interval=self._settings.announce_interval,
            hourly=self._settings.announce_hourly,
        )
        self._delivery.after_append(outcome)
        return offer

    async def claim(self, peer: Peer, offer_id: str, note: str | None = None) -> Offer:
        if note is not None and len(note) > MAX_NOTE:
            raise InvalidRequest(f"a note is at most {MAX_NOTE} characters", field="note")
        offer, outcome = await self._store.claim_offer(
            offer_id,
            claimant_id=peer.id,
            claimant=peer.name,
            note=note,
            now=self._clock.now(),
            notice=lambda o: self._notice(
                peer,
                o.poster,
                MessageKind.OFFER_CLAIM,
                note or f"{peer.name} claims your offer",
                o,
                claimant=peer.name,
            ),
        )
        if outcome is not None:
            self._delivery.after_append(outcome)
        return offer

    async def resolve(
        self, peer: Peer, offer_id: str, *, select: str | None = None, withdraw: bool = False
    ) -> Offer:
        if (select is None) == (not withdraw):
            raise InvalidRequest("give exactly one of select=<claimant> or withdraw=true")

        def assign(o: Offer, winner: str) -> tuple[str, NewMessage, float]:
            task_id = "t_" + self._ids.next().removeprefix("m_")
            message = self._notice(
                peer,
                winner,
                MessageKind.TASK,
                o.payload,
                o,
                task_id=task_id,
                state="pending",
                subject=o.subject,
            )
            return task_id, message, self._clock.now() + self._settings.task_ttl

        def notice(o: Offer, claimant: str, how: str) -> NewMessage:
            text = (
                f"offer {o.id} went to {o.winner}"
                if how == "not_selected"
                else f"offer {o.id} was withdrawn"
            )
            kind = (
                MessageKind.OFFER_NOT_SELECTED
                if how == "not_selected"
                else MessageKind.OFFER_WITHDRAWN
            )
            return self._notice(peer, claimant, kind, text, o)

        resolution = await self._store.resolve_offer(
            offer_id,
            poster_id=peer.id,
            select=select,
            now=self._clock.now(),
            assign=assign,
            notice=notice,
        )
        for outcome in resolution.outcomes:
            self._delivery.after_append(outcome)
        return resolution.offer

    async def listing(
        self, state: str | None = None, *, matching: Peer | None = None
    ) -> list[Offer]:
        """Offers in `state`; with `matching`, only those whose required skills that peer has."""
        if state is not None and state not in OFFER_STATES:
            raise InvalidRequest(f"status is one of {', '.join(OFFER_STATES)}", field="status")
        offers = await self._store.list_offers(state)
        if matching is not None:
            mine = {s["id"] for s in matching.skills}
            offers = [o for o in offers if {s["id"] for s in o.required_skills} <= mine]
        return offers

    async def sweep(self) -> None:
        await self._store.expire_offers(self._clock.now())
