"""The operator's live feed: a snapshot, then every change as a typed event with a resumable id.

Events get ids `<boot>-<n>`, increasing within one hub process. The last `feed_buffer` events are
kept, as JSON, while a console watches (or read a snapshot) and for five minutes after, so a
client reconnecting with `Last-Event-ID` gets exactly what it missed; one that fell further
behind, came back later, or comes from before a restart, gets a fresh snapshot instead (never
a gap).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import secrets
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import HTTPConnection

from caucus.domain.events import (
    ChannelChanged,
    ChannelClosed,
    ChannelJoined,
    ChannelLeft,
    ChannelReopened,
    DecisionRecorded,
    DeliberationChanged,
    Event,
    FloorChanged,
    FormAsked,
    FormSettled,
    MessageRouted,
    ModeChanged,
    PeerJoined,
    PeerLeft,
    PeerOffline,
    PeerPaused,
    PeerReaped,
    RateChanged,
    ReservationsChanged,
    StatusChanged,
    TasksChanged,
    TeammatesChanged,
    ToolCalled,
    TopicChanged,
)
from caucus.services.history import sent_by_an_agent
from caucus.services.hub import Hub
from caucus.web.context import NotComposed, served
from caucus.wire.activity import ToolCallInfo
from caucus.wire.console import ConsolePeer, FeedHealth, HealthSample, Snapshot
from caucus.wire.deliberations import DeliberationInfo
from caucus.wire.fields import Wire
from caucus.wire.forms import DecisionRecord, FormInfo
from caucus.wire.messages import RoutedMessage
from caucus.wire.room import ChannelInfo, FloorInfo, RoomState

RECENT_MESSAGES = 100
SAMPLE_STEP = 10.0  # seconds between two kept health samples
HISTORY_SAMPLES = 360  # an hour of them
QUEUE_LIMIT = 10_000  # events waiting for one slow client before it is cut off to resume
KEEP_UNWATCHED = 300.0  # seconds events stay kept for resuming after the last console went


@dataclass(slots=True)
class FeedEvent:
    """A hub event with its feed id. Described (turned into JSON-ready data) only when a client
    reads it: the hub routes far more messages than anyone watches. A kept event holds only
    its JSON (`compact`): no graph of objects for the garbage collector to walk again and
    again while it waits in the buffer."""

    id: str
    event: Event | None  # None: an event another hub process described (FeedRelay)
    _described: tuple[str, dict[str, Any]] | None = None
    _type: str | None = None
    _text: str | None = None

    def _describe(self) -> tuple[str, dict[str, Any]]:
        if self._described is None:
            if self._text is not None:
                assert self._type is not None
                return self._type, json.loads(self._text)
            assert self.event is not None
            described = _describe(self.event)
            assert described is not None
            self._described = described
        return self._described

    @property
    def type(self) -> str:
        return self._type if self._type is not None else self._describe()[0]

    @property
    def data(self) -> dict[str, Any]:
        return self._describe()[1]

    @property
    def text(self) -> str:
        """The data as JSON, written once for every reader of this event."""
        if self._text is None:
            self._type, data = self._describe()
            self._text = json.dumps(data)
        return self._text

    def compact(self) -> None:
        """Keep the JSON only."""
        _ = self.text
        self.event = None
        self._described = None


@dataclass(eq=False)
class Subscription:
    queue: asyncio.Queue[FeedEvent] = field(default_factory=lambda: asyncio.Queue(QUEUE_LIMIT))
    overflowed: bool = False  # the client fell too far behind; it must reconnect and resume


def _data(model: Wire) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(mode="json")
    return data


def _describe(event: Event) -> tuple[str, dict[str, Any]] | None:
    """(type, data) of a hub event as the feed shows it."""
    match event:
        case MessageRouted():
            return "message", _data(RoutedMessage.of(event.message, event.delivered_to))
        case PeerJoined():
            return "peer", {"change": "joined", "name": event.name, "how": event.how}
        case PeerLeft():
            return "peer", {"change": "left", "name": event.name, "reason": event.reason}
        case PeerReaped():
            return "peer", {"change": "reaped", "name": event.name}
        case PeerOffline():
            return "peer", {"change": "offline", "name": event.name}
        case StatusChanged():
            return "peer", {"change": "status", "name": event.name, "status": event.status}
        case PeerPaused():
            return "peer", {"change": "paused", "name": event.name, "paused": event.paused}
        case ChannelJoined():
            return "channel", {"change": "joined", "channel": event.channel, "name": event.name}
        case ChannelLeft():
            return "channel", {"change": "left", "channel": event.channel, "name": event.name}
        case TopicChanged():
            return "channel", {
                "change": "topic",
                "channel": event.channel,
                "topic": event.topic,
                "by": event.by,
            }
        case ChannelClosed():
            return "channel", {"change": "closed", "channel": event.channel}
        case ChannelReopened():
            return "channel", {"change": "reopened", "channel": event.channel}
        case ChannelChanged():
            return "channel", {
                "change": "private" if event.private else "public",
                "channel": event.channel,
            }
    return _describe_room(event)


def _describe_room(event: Event) -> tuple[str, dict[str, Any]] | None:
    """(type, data) of the room's other events: its mode, forms, floors, the ledger, work."""
    match event:
        case ModeChanged():
            return "mode", {"mode": event.mode, "reason": event.reason}
        case RateChanged():
            return "rate", {"capacity": event.capacity, "refill": event.refill}
        case FormAsked():
            return "form", {"change": "asked", "form": _data(FormInfo.of(event.form))}
        case FormSettled():
            change = event.form.state.value
            return "form", {"change": change, "form": _data(FormInfo.of(event.form))}
        case FloorChanged():
            return "floor", _data(FloorInfo.of(event.floor))
        case DecisionRecorded():
            record = _data(DecisionRecord.of(event.decision))
            return "decision", {"index": event.index, "record": record}
        case DeliberationChanged():
            return "deliberation", _data(DeliberationInfo.of(event.snapshot))
        case ToolCalled():
            return "activity", _data(ToolCallInfo.of(event.call))
        case ReservationsChanged():
            return "reservations", {"change": event.change, "holder": event.holder}
        case TasksChanged():
            return "task_changed", {"change": event.change, "task_id": event.task_id}
        case TeammatesChanged():
            said = {"change": event.change, "spawner": event.spawner, "name": event.name}
            return "teammates", said
    return None


_SHOWN = (
    PeerJoined,
    PeerLeft,
    PeerReaped,
    PeerOffline,
    StatusChanged,
    PeerPaused,
    ChannelJoined,
    ChannelLeft,
    TopicChanged,
    ChannelClosed,
    ChannelReopened,
    ChannelChanged,
    ModeChanged,
    RateChanged,
    FormAsked,
    FormSettled,
    DecisionRecorded,
    DeliberationChanged,
    FloorChanged,
    ToolCalled,
    ReservationsChanged,
    TasksChanged,
    TeammatesChanged,
)


class Feed:
    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        self.boot = secrets.token_hex(4)
        self._next = 0
        self._buffer: deque[FeedEvent] = deque(maxlen=hub.settings.feed_buffer)
        self._watched_at = -KEEP_UNWATCHED  # the hub's monotonic time a console last watched
        self._subscribers: set[Subscription] = set()
        self._sent_by: dict[str, int] | None = None  # messages per sender, loaded lazily
        # [second, messages routed in it] for the last minute: bounded, O(1) per message.
        self._per_second: deque[list[int]] = deque()
        self._depth: tuple[float, int] | None = None  # (when, total queue depth)
        self._unsubscribe: Callable[[], None] = hub.notifier.subscribe(self._on_event)
        # The hub's own health, sampled at its upkeep whether or not a console is open:
        # (when, sample), one per SAMPLE_STEP at most, for the last hour.
        self._history: deque[tuple[float, FeedHealth]] = deque(maxlen=HISTORY_SAMPLES)
        hub.after_upkeep.append(self._sample)

    def close(self) -> None:
        self._unsubscribe()
        if self._sample in self._hub.after_upkeep:
            self._hub.after_upkeep.remove(self._sample)

    async def _sample(self) -> None:
        now = self._hub.clock.now()
        if self._history and now - self._history[-1][0] < SAMPLE_STEP:
            return
        self._history.append((now, await self.health()))

    def health_history(self) -> list[HealthSample]:
        now = self._hub.clock.now()
        return [
            HealthSample.model_construct(
                age=round(max(0.0, now - at), 3),
                messages_per_minute=h.messages_per_minute,
                queue_depth=h.queue_depth,
                rss_bytes=h.rss_bytes,
            )
            for at, h in self._history
        ]

    @property
    def last_id(self) -> str:
        return f"{self.boot}-{self._next}"

    # --- in -----------------------------------------------------------------------------------
    def _on_event(self, event: Event) -> None:
        if isinstance(event, MessageRouted):
            second = int(event.ts)
            buckets = self._per_second
            if buckets and buckets[-1][0] == second:
                buckets[-1][1] += 1
            else:
                buckets.append([second, 1])
                while buckets[0][0] <= second - 60:
                    buckets.popleft()
            # Every kind an agent sends counts, as the snapshot's count from storage does.
            if self._sent_by is not None and sent_by_an_agent(event.message):
                sender = event.message.sender
                self._sent_by[sender] = self._sent_by.get(sender, 0) + 1
        elif not isinstance(event, _SHOWN):
            return
        self._next += 1
        self._add(FeedEvent(f"{self.boot}-{self._next}", event))

    def add_described(self, kind: str, data: dict[str, Any]) -> None:
        """An event another hub process sharing the database described (FeedRelay)."""
        self._next += 1
        self._add(FeedEvent(f"{self.boot}-{self._next}", None, (kind, data)))

    @property
    def watched(self) -> bool:
        return bool(self._subscribers)

    def _add(self, item: FeedEvent) -> None:
        # Kept for a console to resume from only while one watches, or lately did; then once
        # as JSON for all of them. Nobody watching, nothing is kept (a console that comes
        # back later gets a snapshot), and the collector has nothing to walk.
        now = self._hub.clock.monotonic()
        if self._subscribers:
            self._watched_at = now
        if now - self._watched_at < KEEP_UNWATCHED:
            item.compact()
            self._buffer.append(item)
        elif self._buffer:
            self._buffer.clear()
        for sub in list(self._subscribers):
            try:
                sub.queue.put_nowait(item)
            except asyncio.QueueFull:
                sub.overflowed = True
                self._subscribers.discard(sub)

    # --- out ----------------------------------------------------------------------------------
    def subscribe(self, last_event_id: str | None) -> tuple[Subscription, list[FeedEvent] | None]:
        """Start following. Returns the subscription and, when `last_event_id` is still in the
        buffer, the events after it; None means the caller needs a snapshot first."""
        sub = Subscription()
        self._subscribers.add(sub)
        return sub, self._after(last_event_id)

    def unsubscribe(self, sub: Subscription) -> None:
        self._subscribers.discard(sub)
        self._watched_at = self._hub.clock.monotonic()

    def _after(self, last_event_id: str | None) -> list[FeedEvent] | None:
        if not last_event_id:
            return None
        boot, _, number = last_event_id.partition("-")
        if boot != self.boot or not number.isdigit():
            return None
        n = int(number)
        if n > self._next:
            return None
        oldest = self._next - len(self._buffer) + 1  # id number of the oldest kept event
        if n < oldest - 1:
            return None  # fell out of the buffer: a snapshot covers the gap
        return [e for e in self._buffer if int(e.id.rpartition("-")[2]) > n]

    async def snapshot(self) -> Snapshot:
        hub = self._hub
        self._watched_at = hub.clock.monotonic()  # its event id is one to resume from
        if self._sent_by is None:
            self._sent_by = await hub.history.sent_by()
        sent = self._sent_by
        recent = await hub.history.recent(RECENT_MESSAGES)
        room = RoomState.of(hub.control.state())
        return Snapshot.model_construct(
            mode=room.mode,
            rate=room.rate,
            peers=[ConsolePeer.counted(v, sent.get(v.name, 0)) for v in await hub.registry.peers()],
            channels=[ChannelInfo.of(c) for c in await hub.channels.all()],
            messages=[RoutedMessage.of(m) for m in recent],
            floors=[FloorInfo.of(f) for f in hub.floors.status()],
            forms=[FormInfo.of(f) for f in await hub.forms.listing()],
            health=await self.health(),
            health_history=self.health_history(),
        )

    async def health(self) -> FeedHealth:
        hub = self._hub
        now = hub.clock.now()
        recent = sum(count for second, count in self._per_second if second > now - 60)
        # The queue depth is a count over storage: shared by every client for a second.
        if self._depth is None or now - self._depth[0] >= 1.0:
            self._depth = (now, await hub.history.waiting())
        views = await hub.registry.peers()
        return FeedHealth(
            uptime=round(now - (hub.started_at or now), 3),
            peers=len(views),
            listening=sum(1 for v in views if v.listening),
            messages_per_minute=recent,
            queue_depth=self._depth[1],
            rss_bytes=rss_bytes(),
        )


def rss_bytes() -> int:
    """The hub process's resident memory now (Linux), else its peak."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def feed_of(request: HTTPConnection) -> Feed:
    """The console feed the composition root put in the request's scope."""
    feed = served(request.scope).feed
    if not isinstance(feed, Feed):
        raise NotComposed("the console feed is served only by caucus.server.build_app()")
    return feed
