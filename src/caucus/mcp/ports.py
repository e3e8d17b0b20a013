"""The small interface the MCP tool catalog is written against.

`LocalPort` (`api/mcp/local_port.py`) calls the hub's services in-process (`/mcp`); `RemotePort`
(`mcp/remote.py`) is a hub over HTTP, through `HubClient` (the stdio bridge). Both answer with
the same wire models (`caucus.wire`), built by the same constructors, and both go through the
same services, so the same policies apply and the catalog formats the same answer whichever
path a call took. This module loads no service: the bridge imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from caucus.wire.deliberations import DeliberationInfo, PositionInfo
from caucus.wire.forms import DecisionRecord, FormInfo
from caucus.wire.messages import Batch, InboundMessage, PeekResult, SendResult
from caucus.wire.peers import Departure, PeerInfo, Registered, StatusInfo
from caucus.wire.reservations import ReservationList
from caucus.wire.room import ChannelInfo, ChannelJoin, FloorInfo, Limits, ProtocolText
from caucus.wire.search import SearchResults, ThreadSummaryInfo
from caucus.wire.spawns import TeammateInfo, Teammates
from caucus.wire.watch import WatchKey, WatchTicket
from caucus.wire.work import OfferInfo, TaskInfo

if TYPE_CHECKING:
    from caucus.domain.peers import Registration


@dataclass(frozen=True, slots=True)
class Convening:
    """What `convene` asks for (the panel: names, or a #channel)."""

    subject: str
    panel: list[str] | str
    chair: str = "operator"
    evidence: list[dict[str, Any]] = field(default_factory=list)
    rounds: int = 2
    deadline: float = 300.0


@dataclass(frozen=True, slots=True)
class Answer:
    """A position (or, from the chair, a verdict) for `submit_position`."""

    stance: str
    summary: str
    confidence: float
    evidence: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Joined:
    """What a port's join did. The token stays in the port: a model never sees it."""

    name: str
    outcome: str
    protocol_version: int
    protocol: str | None
    note: str | None
    handle: str | None  # a state handle that brings this identity back (on /mcp)

    @classmethod
    def of(cls, reg: Registered | Registration, handle: str | None) -> Joined:
        name = reg.name if isinstance(reg, Registered) else reg.peer.name
        return cls(name, reg.outcome, reg.protocol_version, reg.protocol, reg.note, handle)


class HubPort(Protocol):
    """One MCP session's view of the hub: who it is, and what it may do."""

    @property
    def name(self) -> str | None: ...

    @property
    def handle(self) -> str | None:
        """A state handle for this identity, where the transport mints them (/mcp)."""
        ...

    async def identify(self) -> None:
        """Make `name` current when the port holds a credential it has not used yet."""
        ...

    async def join(
        self,
        name: str | None,
        skills: list[str] | None,
        description: str | None,
        *,
        protocol_version: int | None,
        handle: str | None,
        agent_key: str | None,
    ) -> Joined: ...

    async def leave(self) -> Departure: ...

    async def offline(self) -> None:
        """The session ended: tell the hub, keeping the identity resumable."""
        ...

    def report_call(
        self,
        tool: str,
        *,
        ok: bool,
        error: str | None,
        detail: str | None,
        ms: float,
        arguments: dict[str, Any] | None = None,
    ) -> None:
        """A tool call ended: put it on the hub's activity view (never delays the answer),
        with what it was called with (redacted before it leaves, `domain.activity`)."""
        ...

    async def limits(self) -> Limits: ...

    async def peers(self) -> list[PeerInfo]: ...

    async def ping(self, peer: str) -> PeerInfo: ...

    async def set_status(self, status: str) -> StatusInfo: ...

    async def say(
        self, to: str, content: str, thread: str | None, reply_to: str | None
    ) -> SendResult: ...

    async def listen(self, timeout: float) -> Batch: ...

    async def mint_watch_key(self) -> WatchKey:
        """A key that only waits for this identity's messages (for a watcher on this machine)."""
        ...

    async def mint_watch_ticket(self) -> WatchTicket:
        """A single-use ticket for a watcher elsewhere (voids the last one)."""
        ...

    async def peek(self) -> PeekResult: ...

    async def catch_up(self) -> list[InboundMessage]:
        """What waits for a brand-new identity (announcements from before it came), taken
        and acknowledged at once: read as catch-up, so it never wakes anyone."""
        ...

    async def join_channel(self, channel: str, private: bool = False) -> ChannelJoin: ...

    async def leave_channel(self, channel: str) -> None: ...

    async def channels(self) -> list[ChannelInfo]: ...

    async def set_topic(self, channel: str, topic: str) -> ChannelInfo: ...

    async def protocol(self, name: str | None) -> ProtocolText: ...

    async def send_task(
        self,
        to: str,
        content: str,
        subject: str | None,
        thread: str | None,
        terms: dict[str, Any] | None = None,
    ) -> TaskInfo:
        """`terms`: blocked_by, priority, on_failure (`HubClient.send_task`)."""
        ...

    async def ready_tasks(self) -> list[TaskInfo]: ...

    async def depend(self, task_id: str, blocked_by: list[str]) -> TaskInfo: ...

    async def task_status(self, task_id: str) -> TaskInfo: ...

    async def list_tasks(self, role: str, status: str | None) -> list[TaskInfo]: ...

    async def reply_task(self, task_id: str, result: str) -> TaskInfo: ...

    async def fail_task(self, task_id: str, error: str) -> TaskInfo: ...

    async def request_input(self, task_id: str, question: str) -> TaskInfo: ...

    async def cancel_task(self, task_id: str) -> TaskInfo: ...

    async def announce(self, content: str, subject: str | None) -> SendResult: ...

    async def floor(self, action: str, scope: str, reason: str | None) -> FloorInfo: ...

    async def floor_now(self, scope: str) -> FloorInfo:
        """One scope's floor, read before joining too."""
        ...

    async def post_offer(
        self,
        content: str,
        subject: str | None,
        skills: list[str] | None,
        ttl: float | None,
        terms: dict[str, Any] | None = None,
    ) -> OfferInfo: ...

    async def claim_offer(self, offer_id: str, note: str | None) -> OfferInfo: ...

    async def resolve_offer(
        self, offer_id: str, select: str | None, withdraw: bool
    ) -> OfferInfo: ...

    async def list_offers(self, status: str | None, matching: bool) -> list[OfferInfo]: ...

    async def reserve(
        self, paths: list[str], exclusive: bool, ttl: float | None, reason: str | None
    ) -> ReservationList: ...

    async def release(self, ids: list[str], paths: list[str], everything: bool) -> ReservationList:
        """The reservations named (or all the caller holds) released."""
        ...

    async def renew(self, ids: list[str], ttl: float | None) -> ReservationList: ...

    async def reservations(self, holder: str | None) -> ReservationList:
        """What stands; read before joining too."""
        ...

    async def teammates(self) -> Teammates:
        """What the caller may spawn, and its teammates."""
        ...

    async def spawn(
        self, prompt: str, profile: str, tools: list[str], name: str | None
    ) -> TeammateInfo: ...

    async def stop_teammate(self, spawn_id: str) -> TeammateInfo: ...

    async def search(self, q: str, filters: dict[str, Any]) -> SearchResults:
        """`HubClient.search`: what the caller may read that holds every word of `q`."""
        ...

    async def thread_summary(self, thread: str) -> ThreadSummaryInfo: ...

    async def ask_operator(self, title: str, fields: list[dict[str, Any]], to: str) -> FormInfo: ...

    async def forms(self) -> list[FormInfo]: ...

    async def decisions(self, limit: int) -> list[DecisionRecord]: ...

    async def convene(self, convening: Convening) -> DeliberationInfo: ...

    async def submit_position(self, deliberation_id: str, answer: Answer) -> PositionInfo: ...
