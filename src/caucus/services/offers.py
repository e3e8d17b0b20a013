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
from caucus.domain.caps import check_open_offers
from caucus.domain.dependencies import DEFAULT_PRIORITY, OnFailure, dooms, met
from caucus.domain.messages import AppendOutcome, MessageKind, NewMessage, SystemSender
from caucus.domain.names import BROADCAST
from caucus.domain.offers import (
    OFFER_STATES,
    Offer,
    OfferState,
    Resolution,
    after_assignment,
    check_claimant,
    check_open,
    check_resolver,
    check_selectable,
    pending_claimants,
)
from caucus.domain.peers import Peer, normalize_skills
from caucus.domain.tasks import Task, TaskState
from caucus.errors import Conflict, Hint, InvalidRequest, NotFound
from caucus.ids import MessageIds
from caucus.services.announcements import Announcements, announce
from caucus.services.delivery import DeliveryService
from caucus.services.dependencies import TaskGraph, check_terms
from caucus.services.task_units import open_task
from caucus.services.tasks import TaskService
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos

MIN_TTL, MAX_TTL, DEFAULT_TTL = 60.0, 72 * 3600.0, 24 * 3600.0
MAX_NOTE = 500


class OfferService:
    def __init__(
        self,
        db: Engine,
        delivery: DeliveryService,
        announcements: Announcements,
        tasks: TaskService,
        clock: Clock,
        settings: Settings,
    ) -> None:
        self._db = db
        tasks.on_moved.append(self.after_task)
        tasks.on_moved.append(self.after_dependency)
        tasks.graph.on_ended.append(self.after_dependency)
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
        return self._delivery.compose(
            sender or SystemSender.HUB,
            to,
            kind,
            text,
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
        blocked_by: list[str] | None = None,
        priority: int = DEFAULT_PRIORITY,
        on_failure: str = OnFailure.CANCEL,
    ) -> Offer:
        """Post work to the board. With `blocked_by` (tasks), it is announced and opens to
        claims only once they are done (`on_failure`: what one failing does)."""
        policy = check_terms(blocked_by, priority, on_failure)
        self._announcements.check(payload, subject)
        skills = normalize_skills(required_skills) if required_skills is not None else []
        ttl = min(max(ttl_seconds if ttl_seconds is not None else DEFAULT_TTL, MIN_TTL), MAX_TTL)
        self._delivery.check_can_send(peer)
        now = self._clock.now()
        offer_id = "o_" + self._ids.next().removeprefix("m_")
        meta = _offer_meta(offer_id, now + ttl, subject, skills)
        announcement = self._announcement(peer, offer_id, payload, meta)
        settings = self._settings

        def post(r: Repos) -> tuple[Offer, AppendOutcome | None]:
            # Announce and open, or neither: every cap is read before anything is written.
            check_open_offers(r.offers.open_count(peer.id, now), settings.open_offers_max)
            waits = TaskGraph.unmet(r, peer, None, blocked_by or [], policy)
            outcome = None
            if not waits:
                outcome = announce(
                    r, announcement, settings.announce_interval, settings.announce_hourly
                )
            r.offers.insert(
                offer_id=offer_id,
                poster_id=peer.id,
                poster=peer.name,
                subject=subject,
                payload=payload,
                required_skills=skills,
                now=now,
                expires_at=now + ttl,
                priority=priority,
                blocked=bool(waits),
                on_failure=policy.value,
            )
            if blocked_by:
                r.dependencies.add_to_offer(offer_id, blocked_by)
            offer = r.offers.get(offer_id)
            assert offer is not None
            return offer, outcome

        offer, outcome = await self._db.write(post)
        if outcome is not None:
            self._delivery.after_append(outcome)
        return offer

    async def claim(self, peer: Peer, offer_id: str, note: str | None = None) -> Offer:
        if note is not None and len(note) > MAX_NOTE:
            raise InvalidRequest(f"a note is at most {MAX_NOTE} characters", field="note")
        now = self._clock.now()

        def claim(r: Repos) -> tuple[Offer, AppendOutcome | None]:
            offer, poster_id = self._open(r, offer_id, now)
            check_claimant(offer, poster_id, peer.id)
            if not r.offers.add_claim(offer_id, peer.id, peer.name, note, now):
                raise Conflict(f"you already have a pending claim on {offer_id}", offer_id=offer_id)
            offer, _ = self._open(r, offer_id, now)
            text = note or f"{peer.name} claims your offer"
            notice = self._notice(
                peer, offer.poster, MessageKind.OFFER_CLAIM, text, offer, claimant=peer.name
            )
            return offer, r.inbox.to_peer(notice, offer.poster)  # a poster who left: nothing

        offer, outcome = await self._db.write(claim)
        if outcome is not None:
            self._delivery.after_append(outcome)
        return offer

    def _hand_out(
        self, r: Repos, peer: Peer, offer: Offer, select: str, task_id: str, now: float
    ) -> AppendOutcome:
        """The offer's task to the claimant the poster selected, in the resolving unit."""
        item = self._notice(
            peer,
            select,
            MessageKind.TASK,
            offer.payload,
            offer,
            task_id=task_id,
            state="pending",
            subject=offer.subject,
        )
        _, outcome = open_task(
            r,
            task_id=task_id,
            sender_id=peer.id,
            sender=offer.poster,
            to=select,
            subject=offer.subject,
            payload=offer.payload,
            thread=offer.id,
            now=now,
            expires_at=now + self._settings.task_ttl,
            message=item,
            offer_id=offer.id,
        )
        return outcome

    async def resolve(
        self, peer: Peer, offer_id: str, *, select: str | None = None, withdraw: bool = False
    ) -> Offer:
        if (select is None) == (not withdraw):
            raise InvalidRequest(
                "give exactly one of select=<claimant> or withdraw=true", field="select"
            )

        now = self._clock.now()

        def resolve(r: Repos) -> Resolution:
            offer, poster_id = self._open(r, offer_id, now)
            check_resolver(offer, poster_id, peer.id)
            losers = pending_claimants(offer)
            outcomes: list[AppendOutcome] = []
            if select is not None:
                check_selectable(offer, select)
                task_id = "t_" + self._ids.next().removeprefix("m_")
                outcomes.append(self._hand_out(r, peer, offer, select, task_id, now))
                r.offers.assign(offer_id, select, task_id, now)
                losers = [c for c in losers if c != select]
                kind, text = MessageKind.OFFER_NOT_SELECTED, f"offer {offer_id} went to {select}"
            else:
                r.offers.withdraw(offer_id, now)
                kind, text = MessageKind.OFFER_WITHDRAWN, f"offer {offer_id} was withdrawn"
            updated = r.offers.get(offer_id)
            assert updated is not None
            for name in losers:
                told = r.inbox.to_peer(self._notice(peer, name, kind, text, updated), name)
                if told is not None:
                    outcomes.append(told)
            return Resolution(updated, outcomes)

        resolution = await self._db.write(resolve)
        for outcome in resolution.outcomes:
            self._delivery.after_append(outcome)
        return resolution.offer

    async def listing(
        self, state: str | None = None, *, matching: Peer | None = None
    ) -> list[Offer]:
        """Offers in `state`; with `matching`, only those whose required skills that peer has."""
        if state is not None and state not in OFFER_STATES:
            raise InvalidRequest(f"status is one of {', '.join(OFFER_STATES)}", field="status")
        offers = await self._db.read(lambda r: r.offers.in_state(state))
        if matching is not None:
            mine = {s["id"] for s in matching.skills}
            offers = [o for o in offers if {s["id"] for s in o.required_skills} <= mine]
        return offers

    async def sweep(self) -> None:
        now = self._clock.now()
        await self._db.write(lambda r: r.offers.expire(now))

    def _announcement(
        self, sender: Peer | str, offer_id: str, payload: str, meta: dict[str, Any]
    ) -> NewMessage:
        return self._delivery.compose(
            sender,
            BROADCAST,
            MessageKind.ANNOUNCE,
            payload,
            meta=meta,
            thread=offer_id,
            joins_channel=False,
        )

    # --- inside other units ---------------------------------------------------------------
    def after_dependency(
        self, r: Repos, task: Task, state: TaskState, now: float
    ) -> list[AppendOutcome]:
        """The offers waiting on `task`, as it ends: announced and opened once all they wait
        on is done, or withdrawn (the poster told) when it failed and that cancels them."""
        if state.open or not task.dependents:
            return []
        told: list[AppendOutcome | None] = []
        for offer_id in r.dependencies.offers_waiting_on(task.id):
            offer = r.offers.get(offer_id)
            assert offer is not None
            policy = OnFailure(offer.on_failure)
            if dooms(state, policy):
                r.offers.withdraw(offer_id, now)
                text = f"offer {offer_id} was withdrawn: task {task.id} it waited on is {state}"
                notice = self._notice(None, offer.poster, MessageKind.OFFER_WITHDRAWN, text, offer)
                told.append(r.inbox.to_peer(notice, offer.poster))
            elif all(
                met(s, policy) for s in r.dependencies.offer_waits_on(offer_id)
            ) and r.dependencies.release_offer(offer_id, now):
                opened = r.offers.get(offer_id)
                assert opened is not None
                meta: dict[str, Any] = {"offer_id": offer_id, "expires_at": opened.expires_at}
                if opened.subject:
                    meta["subject"] = opened.subject
                if opened.required_skills:
                    meta["required_skills"] = [k["id"] for k in opened.required_skills]
                item = self._announcement(opened.poster, offer_id, opened.payload, meta)
                told.append(r.inbox.to_everyone(item))
        return [o for o in told if o is not None]

    @staticmethod
    def after_task(r: Repos, task: Task, state: TaskState, now: float) -> None:
        """The job board's reaction to a task's move, in the move's own unit: the offer the
        task was assigned from follows its ending (`domain.offers.after_assignment`)."""
        if state.open or task.offer_id is None:
            return
        offer = r.offers.assigned_from(task.id)
        if offer is None:
            return
        becomes = after_assignment(state, offer.expires_at, now)
        if becomes is OfferState.COMPLETED:
            r.offers.set_state(offer.id, becomes, now)
        elif becomes is not None:
            r.offers.reopen(offer, becomes, now)

    @staticmethod
    def _open(r: Repos, offer_id: str, now: float) -> tuple[Offer, int]:
        """An open offer (and its poster's id), or the reason it is not."""
        found = r.offers.with_poster(offer_id)
        if found is None:
            raise NotFound(f"no offer {offer_id!r}", hint=Hint.LIST_OFFERS, offer_id=offer_id)
        check_open(found[0], now)
        return found


def _offer_meta(
    offer_id: str, expires_at: float, subject: str | None, skills: list[dict[str, Any]]
) -> dict[str, Any]:
    """What an offer's announcement carries besides its text."""
    meta: dict[str, Any] = {"offer_id": offer_id, "expires_at": expires_at}
    if subject:
        meta["subject"] = subject
    if skills:
        meta["required_skills"] = [s["id"] for s in skills]
    return meta
