"""Repositories per noun, composed over one unit of work's connection (issue 14).

Each is a plain class of named statements (`storage/sql/{shared,<dialect>}/queries.sql`),
rows read by column name; none inherits from another. `Repos` is what a unit of work receives: every
repository over the same transaction, built once per connection (they hold no state of their
own but the connection), so handing them to a unit costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from caucus.storage.engine import Tx
from caucus.storage.repos.announcements import Announcements
from caucus.storage.repos.channels import Channels
from caucus.storage.repos.dependencies import Dependencies
from caucus.storage.repos.forms import Forms, LedgerIntents
from caucus.storage.repos.inbox import Inbox
from caucus.storage.repos.messages import Idempotency, Messages
from caucus.storage.repos.offers import Offers
from caucus.storage.repos.peers import Peers, RecipientCache
from caucus.storage.repos.reservations import Reservations
from caucus.storage.repos.retention import Retention
from caucus.storage.repos.room import RoomState
from caucus.storage.repos.search import Search
from caucus.storage.repos.spawns import Spawns
from caucus.storage.repos.tasks import Tasks
from caucus.storage.repos.trips import ONE_STATEMENT, ROW_BY_ROW, Trips
from caucus.storage.repos.watch import WatchCredentials


class Repos:
    __slots__ = (
        "announcements",
        "channels",
        "dependencies",
        "forms",
        "idempotency",
        "inbox",
        "ledger",
        "messages",
        "offers",
        "peers",
        "reservations",
        "retention",
        "room",
        "search",
        "spawns",
        "tasks",
        "tx",
        "watch",
    )

    def __init__(
        self,
        tx: Tx,
        *,
        recipients: RecipientCache | None = None,
        next_lease: Callable[[], int] | None = None,
        trips: Trips = ROW_BY_ROW,
    ) -> None:
        self.tx = tx
        self.peers = Peers(tx, recipients)
        self.watch = WatchCredentials(tx)
        self.messages = Messages(tx)
        self.idempotency = Idempotency(tx)
        self.channels = Channels(tx)
        self.tasks = Tasks(tx)
        self.inbox = Inbox(
            tx,
            self.peers,
            self.channels,
            self.messages,
            self.idempotency,
            next_lease or _no_lease,
            trips,
            self.tasks.claim_received,
        )
        self.dependencies = Dependencies(tx)
        self.offers = Offers(tx)
        self.reservations = Reservations(tx)
        self.forms = Forms(tx)
        self.ledger = LedgerIntents(tx)
        self.announcements = Announcements(tx)
        self.room = RoomState(tx)
        self.retention = Retention(tx)
        self.search = Search(tx)
        self.spawns = Spawns(tx)


def _no_lease() -> int:
    raise RuntimeError("deliveries are claimed in write units only")


__all__ = ["ONE_STATEMENT", "ROW_BY_ROW", "RecipientCache", "Repos", "Trips"]
