"""`HubClient`: the async Python client of the hub's HTTP API.

Results are typed dataclasses; every error the hub reports is raised as the matching
`caucus.errors` class (the same tree the hub uses), so `except NameInUse:` works whether the code
runs in-process or over HTTP. Receiving acknowledges the previous batch on the next call, the way
the protocol recommends.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import httpx2

from caucus.errors import HubUnavailable, error_from_body

DEFAULT_HUB = "http://127.0.0.1:8765"


@dataclass(frozen=True, slots=True)
class Registered:
    token: str
    name: str
    outcome: str
    protocol_version: int
    protocol: str | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class SendResult:
    message_id: str
    seq: int
    delivered_to: list[str]
    missed: list[str]
    replayed: bool = False  # the hub answered a repeated idempotency key with the first result


@dataclass(frozen=True, slots=True)
class InboundMessage:
    seq: int
    id: str
    ts: float
    sender: str
    to: str
    kind: str
    content: str
    meta: dict[str, Any] | None
    thread: str | None
    reply_to: str | None
    redelivered: bool
    delivery_count: int


@dataclass(frozen=True, slots=True)
class Batch:
    messages: list[InboundMessage]
    acked: int
    superseded: bool


@dataclass(frozen=True, slots=True)
class LastPreview:
    seq: int
    sender: str
    to: str
    preview: str
    truncated: bool
    chars: int


@dataclass(frozen=True, slots=True)
class PeekResult:
    pending: int
    last: LastPreview | None


@dataclass(frozen=True, slots=True)
class PeerInfo:
    name: str
    state: str
    status: str
    status_age: float | None
    skills: list[dict[str, Any]]
    description: str
    last_seen_age: float
    listening: bool
    paused: bool = False
    uptime: float = 0.0


@dataclass(frozen=True, slots=True)
class ChannelInfo:
    name: str
    topic: str
    topic_by: str | None
    members: list[str]
    created_at: float
    joined: bool | None = None


@dataclass(frozen=True, slots=True)
class ProtocolText:
    version: int
    text: str
    sections: list[str] = field(default_factory=list)
    section: str | None = None


@dataclass(frozen=True, slots=True)
class TaskInfo:
    task_id: str
    sender: str
    worker: str
    subject: str | None
    payload: str
    thread: str
    state: str
    a2a_state: str
    created_at: float
    updated_at: float
    expires_at: float
    result: str | None = None
    error: str | None = None
    question: str | None = None
    answer: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class OfferInfo:
    offer_id: str
    poster: str
    subject: str | None
    payload: str
    required_skills: list[dict[str, Any]]
    state: str
    created_at: float
    updated_at: float
    expires_at: float
    winner: str | None = None
    task_id: str | None = None
    claims: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FormInfo:
    form_id: str
    asker: str
    to: str
    title: str
    fields: list[dict[str, Any]]
    state: str
    created_at: float
    updated_at: float
    answer: dict[str, str | list[str]] | None = None
    reason: str | None = None
    decision_hash: str | None = None


def pick_fields(cls: type[Any], data: dict[str, Any]) -> dict[str, Any]:
    names = cls.__dataclass_fields__
    return {k: v for k, v in data.items() if k in names}


class BaseClient:
    """HTTP plumbing shared by the agent and operator clients: one bearer token, one error
    mapping (every hub error raises its `caucus.errors` class)."""

    def __init__(
        self,
        base_url: str = DEFAULT_HUB,
        *,
        token: str | None = None,
        timeout: float = 10.0,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self._timeout = timeout
        self._http = httpx2.AsyncClient(
            base_url=self.base_url,
            timeout=httpx2.Timeout(timeout),
            transport=transport,
            headers={"User-Agent": "caucus-client"},
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # --- plumbing --------------------------------------------------------------------------
    async def _call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        read_timeout: float | None = None,
        auth: bool = True,
        headers: dict[str, str] | None = None,
    ) -> httpx2.Response:
        headers = dict(headers or {})
        if auth and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        timeout = None
        if read_timeout is not None:
            timeout = httpx2.Timeout(self._timeout, read=read_timeout)
        try:
            response = await self._http.request(
                method,
                path,
                json=json,
                params={k: v for k, v in (params or {}).items() if v is not None},
                headers=headers,
                timeout=timeout if timeout is not None else httpx2.USE_CLIENT_DEFAULT,
            )
        except httpx2.TransportError as exc:
            raise HubUnavailable(
                f"cannot reach the hub at {self.base_url} ({type(exc).__name__}); is "
                "`caucus hub` running there?"
            ) from exc
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = None
            raise error_from_body(response.status_code, body)
        return response

    async def health(self) -> dict[str, Any]:
        data: dict[str, Any] = (await self._call("GET", "/health", auth=False)).json()
        return data

    async def wait_ready(self, timeout: float = 15.0) -> None:
        """Poll /health until the hub answers (used after starting a hub process)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            try:
                await self.health()
                return
            except HubUnavailable:
                if loop.time() > deadline:
                    raise
                await asyncio.sleep(0.05)


class HubClient(BaseClient):
    """One identity's connection to a hub. Use as `async with HubClient(url) as hub:`."""

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
        body: dict[str, Any] = {"name": name}
        if resume and self.token:
            body["token"] = self.token
        if skills is not None:
            body["skills"] = skills
        if description is not None:
            body["description"] = description
        if protocol_version is not None:
            body["protocol_version"] = protocol_version
        headers = {"X-Caucus-Agent-Key": self.agent_key} if self.agent_key else None
        data = (
            await self._call("POST", "/register", json=body, auth=False, headers=headers)
        ).json()
        self.token = data["token"]
        self.name = data["name"]
        self._cursor = None
        return Registered(**pick_fields(Registered, data))

    async def leave(self) -> None:
        await self._call("POST", "/leave")
        self.token = None

    async def set_status(self, status: str) -> None:
        await self._call("POST", "/status", json={"status": status})

    async def peers(self) -> list[PeerInfo]:
        data = (await self._call("GET", "/peers")).json()
        return [PeerInfo(**pick_fields(PeerInfo, p)) for p in data["peers"]]

    async def ping(self, peer: str) -> PeerInfo:
        data = (await self._call("GET", "/ping", params={"peer": peer})).json()
        return PeerInfo(**pick_fields(PeerInfo, data))

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
        body: dict[str, Any] = {"to": to, "content": content}
        for key, value in (
            ("thread", thread),
            ("reply_to", reply_to),
            ("meta", meta),
            ("idempotency_key", idempotency_key),
        ):
            if value is not None:
                body[key] = value
        response = await self._call("POST", "/send", json=body)
        data = response.json()
        replayed = response.headers.get("idempotent-replayed") == "true"
        return SendResult(**pick_fields(SendResult, data), replayed=replayed)

    async def receive(
        self, timeout: float = 25.0, *, limit: int | None = None, auto_ack: bool = True
    ) -> Batch:
        """Long-poll for messages. With `auto_ack`, this call acknowledges the previous batch."""
        params: dict[str, Any] = {"timeout": timeout, "limit": limit}
        if auto_ack and self._cursor is not None:
            params["ack"] = self._cursor
        response = await self._call(
            "GET", "/receive", params=params, read_timeout=timeout + self._timeout
        )
        data = response.json()
        if auto_ack and self._cursor is not None:
            self._cursor = None
        messages = [InboundMessage(**pick_fields(InboundMessage, m)) for m in data["messages"]]
        if messages:
            self._cursor = messages[-1].seq
        return Batch(messages, data["acked"], data["superseded"])

    async def ack(self, *, seqs: list[int] | None = None, through: int | None = None) -> int:
        body: dict[str, Any] = {}
        if seqs is not None:
            body["seqs"] = seqs
        if through is not None:
            body["through"] = through
        data = (await self._call("POST", "/ack", json=body)).json()
        if through is not None and through == self._cursor:
            self._cursor = None
        acked: int = data["acked"]
        return acked

    async def flush_acks(self) -> int:
        """Acknowledge the last batch now instead of on the next receive."""
        if self._cursor is None:
            return 0
        return await self.ack(through=self._cursor)

    async def peek(self) -> PeekResult:
        data = (await self._call("GET", "/peek")).json()
        last = LastPreview(**pick_fields(LastPreview, data["last"])) if data["last"] else None
        return PeekResult(data["pending"], last)

    # --- channels --------------------------------------------------------------------------
    async def join_channel(self, channel: str) -> ChannelInfo:
        data = (await self._call("POST", "/channels/join", json={"channel": channel})).json()
        return ChannelInfo(**pick_fields(ChannelInfo, data))

    async def leave_channel(self, channel: str) -> None:
        await self._call("POST", "/channels/leave", json={"channel": channel})

    async def set_topic(self, channel: str, topic: str) -> ChannelInfo:
        data = (
            await self._call("POST", "/channels/topic", json={"channel": channel, "topic": topic})
        ).json()
        return ChannelInfo(**pick_fields(ChannelInfo, data))

    async def channels(self) -> list[ChannelInfo]:
        data = (await self._call("GET", "/channels")).json()
        return [ChannelInfo(**pick_fields(ChannelInfo, c)) for c in data["channels"]]

    async def announce(self, payload: str, *, subject: str | None = None) -> SendResult:
        """News for every peer (capped per sender; peers joining within 24 h catch up)."""
        body: dict[str, Any] = {"payload": payload}
        if subject is not None:
            body["subject"] = subject
        data = (await self._call("POST", "/announce", json=body)).json()
        return SendResult(**pick_fields(SendResult, data))

    # --- tasks -------------------------------------------------------------------------------
    async def _task(self, method: str, path: str, body: dict[str, Any] | None = None) -> TaskInfo:
        data = (await self._call(method, path, json=body)).json()
        return TaskInfo(**pick_fields(TaskInfo, data))

    async def send_task(
        self, to: str, payload: str, *, subject: str | None = None, thread: str | None = None
    ) -> TaskInfo:
        body: dict[str, Any] = {"to": to, "payload": payload}
        if subject is not None:
            body["subject"] = subject
        if thread is not None:
            body["thread"] = thread
        return await self._task("POST", "/tasks", body)

    async def task_status(self, task_id: str) -> TaskInfo:
        return await self._task("GET", f"/tasks/{task_id}")

    async def list_tasks(self, role: str = "received", status: str | None = None) -> list[TaskInfo]:
        data = (await self._call("GET", "/tasks", params={"role": role, "status": status})).json()
        return [TaskInfo(**pick_fields(TaskInfo, t)) for t in data["tasks"]]

    async def reply_task(self, task_id: str, result: str) -> TaskInfo:
        """As the worker: complete the task. As the sender: answer the worker's question."""
        return await self._task("POST", f"/tasks/{task_id}/reply", {"result": result})

    async def fail_task(self, task_id: str, error: str) -> TaskInfo:
        return await self._task("POST", f"/tasks/{task_id}/fail", {"error": error})

    async def request_input(self, task_id: str, question: str) -> TaskInfo:
        return await self._task("POST", f"/tasks/{task_id}/input", {"question": question})

    async def cancel_task(self, task_id: str) -> TaskInfo:
        return await self._task("POST", f"/tasks/{task_id}/cancel")

    # --- the talking stick --------------------------------------------------------------------
    async def floor(self, action: str, scope: str, reason: str | None = None) -> dict[str, Any]:
        """take, pass, drop, raise, lower or status for `scope` ('all' or '#channel')."""
        body: dict[str, Any] = {"action": action, "scope": scope}
        if reason is not None:
            body["reason"] = reason
        data: dict[str, Any] = (await self._call("POST", "/floor", json=body)).json()
        return data

    # --- operator forms and decisions ---------------------------------------------------------
    async def ask_operator(
        self, title: str, fields: list[dict[str, Any]], *, to: str = "all"
    ) -> FormInfo:
        """Ask the operator; the answer arrives as a `form_answer` item, to `to` and to you.
        Each field is `{key, label?, type: radio|checkbox|text|textarea, options?, required?,
        allow_other?}`."""
        body = {"title": title, "fields": fields, "to": to}
        data = (await self._call("POST", "/forms", json=body)).json()
        return FormInfo(**pick_fields(FormInfo, data))

    async def forms(self) -> list[FormInfo]:
        """Pending forms of your audiences: look before you ask."""
        data = (await self._call("GET", "/forms")).json()
        return [FormInfo(**pick_fields(FormInfo, f)) for f in data["forms"]]

    async def decisions(self, limit: int = 20) -> list[dict[str, Any]]:
        """Ledger records you may see (broadcast and your channels'), newest first."""
        data = (await self._call("GET", "/decisions", params={"limit": limit})).json()
        records: list[dict[str, Any]] = data["decisions"]
        return records

    # --- the job board -----------------------------------------------------------------------
    async def _offer(self, path: str, body: dict[str, Any]) -> OfferInfo:
        data = (await self._call("POST", path, json=body)).json()
        return OfferInfo(**pick_fields(OfferInfo, data))

    async def post_offer(
        self,
        payload: str,
        *,
        subject: str | None = None,
        required_skills: list[str | dict[str, Any]] | None = None,
        ttl_seconds: float | None = None,
    ) -> OfferInfo:
        body: dict[str, Any] = {"payload": payload}
        for key, value in (
            ("subject", subject),
            ("required_skills", required_skills),
            ("ttl_seconds", ttl_seconds),
        ):
            if value is not None:
                body[key] = value
        return await self._offer("/offers", body)

    async def claim_offer(self, offer_id: str, note: str | None = None) -> OfferInfo:
        return await self._offer(f"/offers/{offer_id}/claim", {"note": note} if note else {})

    async def resolve_offer(
        self, offer_id: str, *, select: str | None = None, withdraw: bool = False
    ) -> OfferInfo:
        body: dict[str, Any] = {"withdraw": withdraw}
        if select is not None:
            body["select"] = select
        return await self._offer(f"/offers/{offer_id}/resolve", body)

    async def list_offers(
        self, status: str | None = None, *, matching: bool = False
    ) -> list[OfferInfo]:
        params = {"status": status, "matching": "true" if matching else None}
        data = (await self._call("GET", "/offers", params=params)).json()
        return [OfferInfo(**pick_fields(OfferInfo, o)) for o in data["offers"]]

    # --- protocol and health ---------------------------------------------------------------
    async def protocol(self, section: str | None = None) -> ProtocolText:
        data = (
            await self._call("GET", "/protocol", params={"section": section}, auth=False)
        ).json()
        return ProtocolText(**pick_fields(ProtocolText, data))
