"""The operator's feed across hub processes sharing one database (issue 14, ADR 0014).

Each process's feed shows its own events as they happen. With a shared database, a relay
also shows the others': the events it shows (joins, statuses, channels, the room's mode,
forms, floors, decisions) it signals to the other processes, described as the feed shows them
(a form by its id, which they read back); messages are not signalled one by one (the hub
routes far more than anyone watches) but read from the database, after the seq last shown,
whenever deliveries are committed anywhere and somebody is watching. Ids stay per process:
a client that resumes on the process it followed misses nothing; on another it gets a
snapshot first, as after a restart.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Coroutine, Sequence
from typing import Any

from caucus.dashboard.feed import _SHOWN, Feed, _describe
from caucus.domain.events import Event, FormAsked, FormSettled, MessageRouted
from caucus.errors import CaucusError
from caucus.services.hub import Hub
from caucus.wire.forms import FormInfo
from caucus.wire.messages import RoutedMessage

log = logging.getLogger(__name__)

EVENT_SIGNAL = "event"  # `event <json [kind, data]>` or `event form <change> <form id>`
PAYLOAD_MAX = 7000  # a NOTIFY payload's limit is 8000 bytes
SEEN_MAX = 20_000  # message seqs this process routed itself, not to be shown twice
TAIL_BATCH = 500
KEEP_UP = 0.5  # seconds between reads of the newest seq while nobody watches


class FeedRelay:
    def __init__(self, hub: Hub, feed: Feed) -> None:
        self._hub = hub
        self._feed = feed
        self._routed_here: set[int] = set()
        self._routed_order: deque[int] = deque()
        self._shown_through: int | None = None  # the seq the tail has shown up to
        self._tailing: asyncio.Task[None] | None = None
        self._again = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        self._unsubscribe = hub.notifier.subscribe(self._local)
        hub.notifier.on_signal(self._remote)
        hub.notifier.on_remote_wake(self._woken)
        self._woken(())  # where the tail starts: what is stored now

    def close(self) -> None:
        self._closed = True
        self._unsubscribe()
        for task in list(self._tasks):
            task.cancel()

    # --- this process's events, out --------------------------------------------------------
    def _local(self, event: Event) -> None:
        if isinstance(event, MessageRouted):
            seq = event.message.seq
            self._routed_here.add(seq)
            self._routed_order.append(seq)
            if len(self._routed_order) > SEEN_MAX:
                self._routed_here.discard(self._routed_order.popleft())
            return
        if not isinstance(event, _SHOWN):
            return
        if isinstance(event, FormAsked | FormSettled):
            change = "asked" if isinstance(event, FormAsked) else event.form.state.value
            payload = f"form {change} {event.form.id}"
        else:
            described = _describe(event)
            if described is None:
                return
            payload = json.dumps(described, separators=(",", ":"))
            if len(payload.encode()) > PAYLOAD_MAX:
                log.debug("a %s event is too large to relay; other feeds miss it", described[0])
                return
        self._spawn(self._hub.notifier.signal(f"{EVENT_SIGNAL} {payload}"))

    # --- the other processes' events, in ---------------------------------------------------
    def _remote(self, topic: str) -> None:
        kind, _, body = topic.partition(" ")
        if kind != EVENT_SIGNAL or self._closed:
            return
        if body.startswith("form "):
            _, change, form_id = body.split(" ", 2)
            self._spawn(self._form(change, form_id))
            return
        try:
            described = json.loads(body)
            self._feed.add_described(str(described[0]), dict(described[1]))
        except (ValueError, TypeError, IndexError, KeyError):
            log.warning("an unreadable event from another hub process was dropped")

    async def _form(self, change: str, form_id: str) -> None:
        try:
            form = await self._hub.forms.get(form_id)
        except CaucusError:
            return
        data = FormInfo.of(form).model_dump(mode="json")
        self._feed.add_described("form", {"change": change, "form": data})

    def _woken(self, _peer_ids: Sequence[int]) -> None:
        """Deliveries were committed (here or elsewhere): show the messages not routed here.
        One read at a time; wake-ups meanwhile make it read once more."""
        if self._closed:
            return
        if self._tailing is not None and not self._tailing.done():
            self._again = True
            return
        self._tailing = self._spawn(self._tail())

    async def _tail(self) -> None:
        while True:
            self._again = False
            after = self._shown_through
            if after is None or not self._feed.watched:
                # Nobody watching: only keep up (a new subscriber starts from a snapshot, and
                # the console drops what it shows twice), at most once per KEEP_UP seconds:
                # wake-ups come with every committed batch, and a read for each costs a busy
                # room a good share of its process.
                self._shown_through = await self._hub.history.last_seq()
                await asyncio.sleep(KEEP_UP)
                if not self._again:
                    return
                continue
            found = await self._hub.history.after(after, TAIL_BATCH)
            for message in found:
                if message.seq not in self._routed_here:
                    data = RoutedMessage.of(message, message.delivered_to).model_dump(mode="json")
                    self._feed.add_described("message", data)
            if found:
                self._shown_through = found[-1].seq
            if not self._again and len(found) < TAIL_BATCH:
                return

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("relaying the feed failed: %s", task.exception())
