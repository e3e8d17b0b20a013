"""Announcements: hub-wide news, capped per sender, caught up by peers who join later."""

from __future__ import annotations

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.caps import check_announcement
from caucus.domain.messages import (
    AppendOutcome,
    Lane,
    MessageKind,
    NewMessage,
    SendReceipt,
    SystemSender,
)
from caucus.domain.names import BROADCAST
from caucus.domain.peers import Peer
from caucus.errors import CapPayloadSize, CapSubjectLength, InvalidRequest
from caucus.services.delivery import DeliveryService
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos


class Announcements:
    def __init__(
        self, db: Engine, delivery: DeliveryService, clock: Clock, settings: Settings
    ) -> None:
        self._db = db
        self._delivery = delivery
        self._clock = clock
        self._settings = settings

    def check(self, payload: str, subject: str | None) -> None:
        """The size caps (also used by the job board, whose offers are announced)."""
        if not payload:
            raise InvalidRequest("payload is empty", field="payload")
        size, limit = len(payload.encode("utf-8")), self._settings.announce_payload_bytes
        if size > limit:
            raise CapPayloadSize(
                f"an announcement is at most {limit} bytes; this one is {size}",
                cap="payload_bytes",
                limit=limit,
            )
        chars = self._settings.announce_subject_chars
        if subject is not None and len(subject) > chars:
            raise CapSubjectLength(
                f"a subject is at most {chars} characters", cap="subject_chars", limit=chars
            )

    async def announce(
        self,
        peer: Peer | None,
        payload: str,
        *,
        subject: str | None = None,
        meta: dict[str, object] | None = None,
    ) -> SendReceipt:
        """News for every peer that has not left. `peer` None is the operator (no caps; the
        priority lane)."""
        if peer is not None:
            self.check(payload, subject)
            self._delivery.check_can_send(peer)
        full_meta = dict(meta or {})
        if subject:
            full_meta["subject"] = subject
        message = self._delivery.compose(
            peer or SystemSender.OPERATOR,
            BROADCAST,
            MessageKind.ANNOUNCE,
            payload,
            meta=full_meta or None,
            lane=Lane.CHATTER if peer else Lane.PRIORITY,
            joins_channel=False,
        )
        interval, hourly = self._settings.announce_interval, self._settings.announce_hourly
        outcome = await self._db.write(lambda r: announce(r, message, interval, hourly))
        self._delivery.after_append(outcome)
        return outcome.receipt


def announce(r: Repos, msg: NewMessage, min_interval: float, hourly: int) -> AppendOutcome:
    """Route `msg` to everyone and record it as an announcement, unless its sender made one
    less than `min_interval` ago (CapInterval) or `hourly` in the last hour (CapHourly): the
    caps are read in the same unit that writes, so racing announcements cannot pass them."""
    if msg.sender_id is not None:
        last, count = r.announcements.recent(msg.sender_id, msg.ts)
        check_announcement(msg.ts, last, count, min_interval, hourly)
    outcome = r.inbox.to_everyone(msg)
    r.announcements.record(outcome.message.seq, msg.sender_id, msg.sender, msg.ts)
    return outcome
