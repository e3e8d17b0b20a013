"""`HubClient`: the async Python client of the hub's HTTP API.

Every method is one verb of the hub's verb table (`caucus.wire.verbs`): the row builds the
path and splits the arguments into query and body by its models, so `call(name, **fields)`
reaches a verb this class has no method for yet. Results are the hub's own wire models
(`caucus.wire`), parsed and validated as they arrive; every error the hub reports is raised
as the matching `caucus.errors` class (the same tree the hub uses), so `except NameInUse:`
works whether the code runs in-process or over HTTP. Receiving acknowledges the previous
batch on the next call, the way the protocol recommends.
"""

from __future__ import annotations

from typing import Any

import httpx2

from caucus.client_base import BaseClient
from caucus.defaults import DEFAULT_HUB
from caucus.wire.deliberations import DeliberationInfo, PositionInfo
from caucus.wire.forms import DecisionRecord, FormInfo
from caucus.wire.headers import AGENT_KEY_HEADER
from caucus.wire.messages import Batch, InboundMessage, PeekResult, SendResult
from caucus.wire.peers import Departure, PeerInfo, Registered, StatusInfo
from caucus.wire.reservations import Blocked, ReservationList
from caucus.wire.room import (
    ChannelInfo,
    ChannelJoin,
    ChannelLeave,
    FloorInfo,
    ProtocolText,
)
from caucus.wire.search import SearchResults, ThreadSummaryInfo
from caucus.wire.spawns import TeammateInfo, Teammates
from caucus.wire.verbs import files, identity, messages, meta, room, teams, work
from caucus.wire.watch import WatchKey, WatchTicket
from caucus.wire.work import OfferInfo, TaskInfo

__all__ = [
    "DEFAULT_HUB",
    "Batch",
    "ChannelInfo",
    "DecisionRecord",
    "FloorInfo",
    "FormInfo",
    "HubClient",
    "InboundMessage",
    "OfferInfo",
    "PeekResult",
    "PeerInfo",
    "Registered",
    "SendResult",
    "TaskInfo",
]


class HubClient(BaseClient):
    """One identity's connection to a hub. Use as `async with HubClient(url) as hub:`.

    With an `agent_key` (a hub started with `--agent-key`), it is sent when registering and
    on the calls made before there is a token."""

    def __init__(
        self,
        base_url: str = DEFAULT_HUB,
        *,
        token: str | None = None,
        agent_key: str | None = None,
        timeout: float = 10.0,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, token=token, timeout=timeout, transport=transport)
        self.agent_key = agent_key
        self.name: str | None = None
        self._cursor: int | None = None  # last seq handed to the caller, acknowledged next time

    def _headers(self, auth: bool) -> dict[str, str]:
        headers = super()._headers(auth)
        if self.agent_key and "Authorization" not in headers:
            headers[AGENT_KEY_HEADER] = self.agent_key
        return headers

    # --- identity --------------------------------------------------------------------------
    async def register(
        self,
        name: str,
        *,
        skills: list[str | dict[str, Any]] | None = None,
        description: str | None = None,
        protocol_version: int | None = None,
        resume: bool = True,
    ) -> Registered:
        """Join as `name`. With `resume` and a token already held, resume that identity."""
        token = self.token if resume else None
        reg: Registered = await self.verb(
            identity.REGISTER,
            name=name,
            token=token,
            skills=skills,
            description=description,
            protocol_version=protocol_version,
        )
        self.token = reg.token
        self.name = reg.name
        self._cursor = None
        return reg

    async def offline(self) -> Departure:
        """Say goodbye for now: shown offline at once; `register` with the token resumes."""
        return await self.verb(identity.OFFLINE)

    async def leave(self) -> Departure:
        """Leave for good: the token stops working and the name is freed."""
        left: Departure = await self.verb(identity.LEAVE)
        self.token = None
        return left

    async def set_status(self, status: str) -> StatusInfo:
        return await self.verb(identity.SET_STATUS, status=status)

    async def peers(self) -> list[PeerInfo]:
        return (await self.verb(identity.PEERS)).peers

    async def ping(self, peer: str) -> PeerInfo:
        return await self.verb(identity.PING, peer=peer)

    # --- messages --------------------------------------------------------------------------
    async def send(
        self,
        to: str,
        content: str,
        *,
        thread: str | None = None,
        reply_to: str | None = None,
        meta: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> SendResult:
        return await self.verb(
            messages.SEND,
            to=to,
            content=content,
            thread=thread,
            reply_to=reply_to,
            meta=meta,
            idempotency_key=idempotency_key,
        )

    async def receive(
        self, timeout: float = 25.0, *, limit: int | None = None, auto_ack: bool = True
    ) -> Batch:
        """Long-poll for messages. With `auto_ack`, this call acknowledges the previous batch."""
        ack = self._cursor if auto_ack else None
        batch: Batch = await self.verb(
            messages.RECEIVE, timeout=timeout, limit=limit, ack=ack, read_timeout=timeout
        )
        if auto_ack and self._cursor is not None:
            self._cursor = None
        if batch.messages:
            self._cursor = batch.messages[-1].seq
        return batch

    async def ack(self, *, seqs: list[int] | None = None, through: int | None = None) -> int:
        acked: int = (await self.verb(messages.ACK, seqs=seqs, through=through)).acked
        if through is not None and through == self._cursor:
            self._cursor = None
        return acked

    async def flush_acks(self) -> int:
        """Acknowledge the last batch now instead of on the next receive."""
        if self._cursor is None:
            return 0
        return await self.ack(through=self._cursor)

    async def peek(self, *, after: int | None = None, wait: float = 0.0) -> PeekResult:
        """How many messages wait and the newest, consuming nothing; with `after`, wait up to
        `wait` seconds for a pending message newer than that seq."""
        if after is None:
            return await self.verb(messages.PEEK)
        return await self.verb(messages.PEEK, after=after, wait=wait, read_timeout=wait)

    # --- watchers --------------------------------------------------------------------------
    async def mint_watch_key(self) -> WatchKey:
        """A key that only waits for and acknowledges this agent's messages."""
        return await self.verb(identity.MINT_WATCH_KEY)

    async def mint_watch_ticket(self) -> WatchTicket:
        """A single-use ticket a watcher elsewhere redeems for a watch key."""
        return await self.verb(identity.MINT_WATCH_TICKET)

    async def redeem_watch_ticket(self, ticket: str) -> WatchKey:
        return await self.verb(identity.REDEEM_WATCH_TICKET, ticket=ticket)

    async def watch(self, timeout: float = 25.0) -> Batch:
        """As a watcher (this client's token is a watch key): wait for the next batch;
        `superseded` means the agent's own receive displaced this watcher."""
        return await self.verb(identity.WATCH, timeout=timeout, read_timeout=timeout)

    async def watch_ack(self, seqs: list[int]) -> int:
        return (await self.verb(identity.WATCH_ACK, seqs=seqs)).acked

    # --- channels --------------------------------------------------------------------------
    async def join_channel(self, channel: str, *, private: bool = False) -> ChannelJoin:
        """Join (and create) a channel; `private` creates it private: only you, the operator
        and whom the operator invites read it."""
        return await self.verb(room.JOIN_CHANNEL, channel=channel, private=private or None)

    async def leave_channel(self, channel: str) -> ChannelLeave:
        return await self.verb(room.LEAVE_CHANNEL, channel=channel)

    async def set_topic(self, channel: str, topic: str) -> ChannelInfo:
        return await self.verb(room.SET_TOPIC, channel=channel, topic=topic)

    async def channels(self) -> list[ChannelInfo]:
        return (await self.verb(room.CHANNELS)).channels

    async def announce(self, content: str, *, subject: str | None = None) -> SendResult:
        """News for every peer (capped per sender; peers joining within 24 h catch up)."""
        return await self.verb(messages.ANNOUNCE, content=content, subject=subject)

    # --- tasks -------------------------------------------------------------------------------
    async def report_tool_call(
        self,
        tool: str,
        *,
        ok: bool,
        error: str | None,
        detail: str | None,
        ms: float,
        arguments: dict[str, Any] | None = None,
    ) -> None:
        """Put a tool call this client's bridge ran on the operator's activity view (the hub
        redacts secret-looking keys of `arguments` and cuts them short)."""
        await self.verb(
            identity.REPORT_TOOL_CALL,
            tool=tool,
            ok=ok,
            error=error,
            detail=detail,
            ms=ms,
            arguments=arguments or None,
        )

    async def send_task(
        self,
        to: str,
        content: str,
        *,
        subject: str | None = None,
        thread: str | None = None,
        blocked_by: list[str] | None = None,
        priority: int | None = None,
        on_failure: str | None = None,
    ) -> TaskInfo:
        """Hand `to` a task. With `blocked_by` (task ids) it reaches its worker once those are
        done; `on_failure` (cancel | proceed) says what one failing does; `priority` 0-4."""
        return await self.verb(
            work.SEND_TASK,
            to=to,
            content=content,
            subject=subject,
            thread=thread,
            blocked_by=blocked_by,
            priority=priority,
            on_failure=on_failure,
        )

    async def ready_tasks(self, limit: int = 50) -> list[TaskInfo]:
        """What you can start now: your pending tasks nothing holds back, most urgent first."""
        return (await self.verb(work.READY_TASKS, limit=limit)).tasks

    async def depend(self, task_id: str, blocked_by: list[str]) -> TaskInfo:
        """Make a task of yours that still waits wait on more tasks."""
        return await self.verb(work.DEPEND, task_id=task_id, blocked_by=blocked_by)

    async def task_status(self, task_id: str) -> TaskInfo:
        return await self.verb(work.TASK_STATUS, task_id=task_id)

    async def list_tasks(self, role: str = "received", status: str | None = None) -> list[TaskInfo]:
        found = await self.verb(work.LIST_TASKS, role=role, status=status)
        return found.tasks

    async def reply_task(self, task_id: str, result: str) -> TaskInfo:
        """As the worker: complete the task. As the sender: answer the worker's question."""
        return await self.verb(work.REPLY_TASK, task_id=task_id, result=result)

    async def fail_task(self, task_id: str, error: str) -> TaskInfo:
        return await self.verb(work.FAIL_TASK, task_id=task_id, error=error)

    async def request_input(self, task_id: str, question: str) -> TaskInfo:
        return await self.verb(work.REQUEST_INPUT, task_id=task_id, question=question)

    async def cancel_task(self, task_id: str) -> TaskInfo:
        return await self.verb(work.CANCEL_TASK, task_id=task_id)

    # --- the talking stick --------------------------------------------------------------------
    async def floor(self, action: str, scope: str, reason: str | None = None) -> FloorInfo:
        """take, pass, drop, raise, lower or status for `scope` ('all' or '#channel')."""
        return await self.verb(room.FLOOR, action=action, scope=scope, reason=reason)

    async def floors(self) -> list[FloorInfo]:
        return (await self.verb(room.FLOORS)).floors

    # --- operator forms and decisions ---------------------------------------------------------
    async def ask_operator(
        self,
        title: str,
        fields: list[dict[str, Any]],
        *,
        to: str = "all",
        call: dict[str, Any] | None = None,
    ) -> FormInfo:
        """Ask the operator; the answer arrives as a `form_answer` item, to `to` and to you.
        Each field is `{key, label?, type: radio|checkbox|text|textarea, options?, required?,
        allow_other?}`. `call` (`{tool, arguments, files, annotations}`) is a tool call the
        form asks to approve; it must then offer `approve sha256:<its digest>`."""
        return await self.verb(room.ASK_OPERATOR, title=title, fields=fields, to=to, call=call)

    async def withdraw_form(self, form_id: str, reason: str | None = None) -> FormInfo:
        """Take back a pending form of yours: canceled, with `reason`, on the ledger."""
        return await self.verb(room.WITHDRAW_FORM, form_id=form_id, reason=reason or None)

    async def forms(self) -> list[FormInfo]:
        """Pending forms of your audiences: look before you ask."""
        return (await self.verb(room.FORMS)).forms

    async def decisions(self, limit: int = 20) -> list[DecisionRecord]:
        """Ledger records you may see (broadcast and your channels'), newest first."""
        return (await self.verb(room.DECISIONS, limit=limit)).decisions

    async def convene(
        self,
        subject: str,
        panel: list[str] | str,
        *,
        chair: str = "operator",
        evidence: list[dict[str, Any]] | None = None,
        rounds: int = 2,
        deadline: float = 300.0,
    ) -> DeliberationInfo:
        """Convene the peers in `panel` (names, or a #channel) on `subject`: each gets a
        position request as a task per round; `chair` ('operator', 'model' or a peer) decides;
        the decision goes on the ledger and is announced."""
        return await self.verb(
            room.CONVENE,
            subject=subject,
            panel=panel,
            chair=chair,
            evidence=evidence or [],
            rounds=rounds,
            deadline=deadline,
        )

    async def deliberation(self, deliberation_id: str) -> DeliberationInfo:
        return await self.verb(room.DELIBERATION, deliberation_id=deliberation_id)

    async def deliberations(self) -> list[DeliberationInfo]:
        return (await self.verb(room.DELIBERATIONS)).deliberations

    async def submit_position(
        self,
        deliberation_id: str,
        stance: str,
        summary: str,
        confidence: float,
        evidence: list[str] | None = None,
    ) -> PositionInfo:
        """Your position for the round under way (as the chair: your decision, in summary)."""
        return await self.verb(
            room.SUBMIT_POSITION,
            deliberation_id=deliberation_id,
            stance=stance,
            summary=summary,
            confidence=confidence,
            evidence=evidence or [],
        )

    # --- the job board -----------------------------------------------------------------------
    async def post_offer(
        self,
        content: str,
        *,
        subject: str | None = None,
        required_skills: list[str | dict[str, Any]] | None = None,
        ttl_seconds: float | None = None,
        **terms: Any,
    ) -> OfferInfo:
        """Post work to the board. Terms as `send_task`'s: blocked_by, priority, on_failure."""
        return await self.verb(
            work.POST_OFFER,
            content=content,
            subject=subject,
            required_skills=required_skills,
            ttl_seconds=ttl_seconds,
            **terms,
        )

    async def claim_offer(self, offer_id: str, note: str | None = None) -> OfferInfo:
        return await self.verb(work.CLAIM_OFFER, offer_id=offer_id, note=note or None)

    async def resolve_offer(
        self, offer_id: str, *, select: str | None = None, withdraw: bool = False
    ) -> OfferInfo:
        return await self.verb(
            work.RESOLVE_OFFER, offer_id=offer_id, select=select, withdraw=withdraw
        )

    async def list_offers(
        self, status: str | None = None, *, matching: bool = False
    ) -> list[OfferInfo]:
        found = await self.verb(work.LIST_OFFERS, status=status, matching=matching or None)
        return found.offers

    # --- file reservations -------------------------------------------------------------------
    async def reserve(
        self,
        paths: list[str],
        *,
        exclusive: bool = True,
        ttl: float | None = None,
        reason: str | None = None,
    ) -> ReservationList:
        """Reserve paths or globs; the result lists what was granted and any conflicts."""
        return await self.verb(
            files.RESERVE, paths=paths, exclusive=exclusive, ttl=ttl, reason=reason
        )

    async def release(
        self, *, ids: list[str] | None = None, paths: list[str] | None = None, all: bool = False
    ) -> ReservationList:
        """Release reservations by id or pattern, or all of yours; those released."""
        return await self.verb(files.RELEASE, ids=ids or [], paths=paths or [], all=all)

    async def renew(
        self, *, ids: list[str] | None = None, ttl: float | None = None
    ) -> ReservationList:
        """Extend your reservations (those named, or all) from now; those renewed."""
        return await self.verb(files.RENEW, ids=ids or [], ttl=ttl)

    async def reservations(self, holder: str | None = None) -> ReservationList:
        """The reservations that stand (one agent's, if named), oldest first."""
        return await self.verb(files.RESERVATIONS, holder=holder)

    async def blocked(self, paths: list[str], holder: str | None = None) -> list[Blocked]:
        """Which of these files another agent's exclusive reservation covers."""
        found = await self.verb(files.BLOCKED, paths=paths, holder=holder)
        return found.blocked

    async def export(
        self, format: str = "json", *, since: str | None = None, until: str | None = None
    ) -> str:
        """What you may read, as `json`, `markdown` or `text` (the rule search follows)."""
        params = {"format": format, "since": since, "until": until}
        return (await self._call("GET", "/messages/export", params=params, read_timeout=120)).text

    # --- search ------------------------------------------------------------------------------
    async def search(self, q: str, **filters: Any) -> SearchResults:
        """Full-text search over your directs, your channels, broadcasts and decisions: words
        and "quoted phrases", all of which a hit holds. Filters: sender, channel, since and
        until (epoch seconds or ISO 8601), kind (message, announcement, task, decision),
        thread, order (relevance or recent), limit (1-50)."""
        return await self.verb(messages.SEARCH, q=q, **filters)

    async def thread_summary(self, thread: str, *, model: bool = True) -> ThreadSummaryInfo:
        """A thread's summary from the messages of it you may read (the chair model's too,
        when the hub has one and `model`)."""
        return await self.verb(messages.THREAD_SUMMARY, thread=thread, model=model)

    # --- teammates ---------------------------------------------------------------------------
    async def teammates(self) -> Teammates:
        """What you may spawn (your grant, the operator's profiles and tools) and your
        teammates, newest first."""
        return await self.verb(teams.TEAMMATES)

    async def spawn(
        self,
        prompt: str,
        profile: str,
        *,
        tools: list[str] | None = None,
        name: str | None = None,
    ) -> TeammateInfo:
        """Start a teammate (needs the operator's spawn grant): a native agent on one of the
        operator's model profiles with tools from the operator's list. Recorded on the ledger."""
        return await self.verb(
            teams.SPAWN, prompt=prompt, profile=profile, tools=tools or [], name=name
        )

    async def stop_teammate(self, spawn_id: str) -> TeammateInfo:
        return await self.verb(teams.STOP_TEAMMATE, spawn_id=spawn_id)

    # --- protocol ----------------------------------------------------------------------------
    async def protocol(self, section: str | None = None) -> ProtocolText:
        return await self.verb(meta.PROTOCOL, section=section)
