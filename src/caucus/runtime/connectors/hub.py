"""A native agent in the room: the hub connector (`caucus agent --hub URL --name N`).

It joins the hub as a peer (its token kept per hub and name, as the bridge keeps its own, so a
restart resumes the same identity and inbox) and splits the work in two: the poller long-polls
the hub and turns each inbound message into a notice — its text wrapped as untrusted data with
the envelope MCP uses — or, for the operator's controls, into a `Control`; the driver (the
orchestrator) runs the turns. Watching the turns' events, the connector answers where each
turn's latest hub message came from: the sender, the `#channel`, or the task (a reply, or a
failure when the run failed); an answer of `NO_REPLY` posts nothing, and an interrupted run
posts nothing. A loop dampener notices two agents answering each other without end (as many
replies to one place as `loop_limit` within two minutes) and stops answering there, telling the
operator. While a run is under way the agent's status says so, with a short timeout so a
slow hub never holds a turn. The hub's verbs are tools from the one MCP catalog, served to the
agent in-process over the same identity (`hub_tools`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from mcp import Client

from caucus.client import HubClient
from caucus.clock import Clock, SystemClock
from caucus.config import Settings
from caucus.domain.approvals import ToolCallSubject, approve_option
from caucus.errors import (
    CaucusError,
    ChannelPrivate,
    ChannelPublic,
    Forbidden,
    HubUnavailable,
    NameInUse,
    NotFound,
    RateLimited,
    Unauthorized,
)
from caucus.mcp.identity import IdentityStore
from caucus.mcp.remote import RemotePort
from caucus.mcp.server import ToolServer
from caucus.mcp.tool_call import Call
from caucus.mcp.tools import Catalog
from caucus.models.chat import Role
from caucus.models.envelope import wrap
from caucus.protocol import PROTOCOL_VERSION
from caucus.runtime.connectors.routing import Routes
from caucus.runtime.events import (
    Event,
    LoopDampened,
    NewThreadMessage,
    NewThreadRunCreated,
    Observer,
    ThreadReset,
    ThreadRunComplete,
    ThreadRunFailed,
    ThreadRunInterrupted,
)
from caucus.runtime.orchestrator import Control, Notice
from caucus.runtime.tools.approval import DENY, FIELD, Pending, Verdict
from caucus.wire.messages import InboundMessage
from caucus.wire.room import Limits

log = logging.getLogger(__name__)

NO_REPLY = "NO_REPLY"
# The run states the console reads from a native agent's status (the status is the one line a
# peer shows the room): composing, running a tool, interrupted; idle is the status between runs.
COMPOSING = "composing a reply"
RUNNING_TOOL = "running tool"
INTERRUPTED = "interrupted"
LOOP_WINDOW = 120.0  # seconds in which `loop_limit` replies to one place mean a loop
STATUS_WAIT_MAX = 10.0  # seconds the status writer waits out the hub's status budget, at most
# The connector joins, receives and leaves itself: a model calling these would take its
# messages or its identity away from it.
HIDDEN_TOOLS = frozenset({"join", "leave", "listen", "watch_command", "confirm_delivery"})
CONTROLS = frozenset({"interrupt", "reset", "stop"})


class ConnectorError(Exception):
    """The agent cannot join the hub; the message says what to do."""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a reply to a message goes: a peer or a channel, or a task's sender."""

    to: str
    task_id: str | None = None
    reply_to: str | None = None  # the message answered: the reply is threaded under it
    thread: str | None = None


class HubConnector:
    def __init__(
        self,
        url: str,
        name: str,
        *,
        skills: list[str] | None = None,
        description: str | None = None,
        agent_key: str | None = None,
        identities: IdentityStore | None = None,
        poll_timeout: float = 25.0,
        status_timeout: float = 2.0,
        loop_limit: int = 8,
        approve_timeout: float = 600.0,
        clock: Clock | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self._clock = clock or SystemClock()  # the loop window's
        self.name = name
        self._skills = skills
        self._description = description
        self._agent_key = agent_key
        self._identities = identities or IdentityStore(self.url)
        self._poll = poll_timeout
        self._status_timeout = status_timeout
        self.client = HubClient(self.url, agent_key=agent_key)
        self.port = RemotePort(self.client, credentials=self._identities)
        self._keys = itertools.count(1)
        self._routes: Routes[Origin] = Routes()
        self._background: set[asyncio.Task[Any]] = set()
        self.replies: list[tuple[Origin, str]] = []  # what was posted, in order
        self._loop_limit = loop_limit
        self._replied: dict[str, deque[float]] = {}  # where replies went, when
        self.quiet: set[str] = set()  # peers and channels the dampener stopped answering
        self._resting = ""  # the status between runs (what the dampener has to say)
        self._wanted: str | None = None
        self._shown: str | None = None
        self._status_writer: asyncio.Task[None] | None = None
        self._approve_timeout = approve_timeout
        self._approvals: dict[str, Pending] = {}  # form id -> the call waiting for it
        self._approvals_channel: str | None = None
        self.emit: Observer = lambda _: None  # the agent's events

    # --- joining and leaving -------------------------------------------------------------------
    async def open(self) -> None:
        try:
            joined = await self.port.join(
                self.name,
                self._skills,
                self._description,
                protocol_version=PROTOCOL_VERSION,  # the prompt, not the hub, instructs it
                handle=None,
                agent_key=self._agent_key,
            )
        except NameInUse as exc:
            raise ConnectorError(
                f"the name {self.name!r} is taken on {self.url}: {exc.detail}; pick another "
                "--name, or stop the agent that holds it"
            ) from None
        except HubUnavailable:
            raise ConnectorError(
                f"no hub answers at {self.url}; start one (caucus hub) or give --hub"
            ) from None
        except (Unauthorized, Forbidden) as exc:
            raise ConnectorError(
                f"the hub at {self.url} refused to let {self.name!r} join: {exc.detail} (an "
                "exposed hub needs its agent key: --agent-key-env)"
            ) from None
        self.name = joined.name
        log.info("joined %s as %s (%s)", self.url, joined.name, joined.outcome)

    def hub_tools(self) -> Client:
        """The one MCP catalog over this agent's own identity, as an in-process MCP client
        (not entered: the tool executor enters and closes it)."""

        async def call_for(_ctx: Any, _handle: str | None) -> Call:
            return Call(self.port, default_name=self.name, agent_key=self._agent_key)

        async def limits_for(_ctx: Any) -> Limits:
            try:
                return await self.port.limits()
            except CaucusError:
                return Limits.of(Settings())

        server = ToolServer(
            Catalog(), call_for=call_for, limits_for=limits_for, default_name=lambda _: self.name
        )
        return Client(server.server)

    async def close(self) -> None:
        """Say goodbye for now: the peer shows offline at once, and the next start resumes it
        with its inbox (the token is kept)."""
        for task in list(self._background):
            task.cancel()
        for task in list(self._background):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.client.token is not None:
            with contextlib.suppress(CaucusError, OSError):
                async with asyncio.timeout(5):
                    await self.client.flush_acks()
                    await self.client.offline()
        self._identities.close()
        await self.client.aclose()

    # --- the poller ----------------------------------------------------------------------------
    async def notices(self) -> AsyncIterator[Notice | Control]:
        """Every inbound message, as a notice or a control, until the hub ends this peer."""
        failures = 0
        while True:
            try:
                batch = await self.client.receive(timeout=self._poll)
            except Unauthorized:
                yield Control("stop", "the operator removed this agent from the hub")
                return
            except HubUnavailable as exc:
                failures += 1
                delay = min(2.0 * failures, 10.0)
                log.warning("the hub did not answer (%s); trying again in %.0f s", exc, delay)
                await asyncio.sleep(delay)
                continue
            except CaucusError as exc:
                log.error("receiving failed: %s", exc)
                await asyncio.sleep(1.0)
                continue
            failures = 0
            for message in batch.messages:
                item = self._notice(message)
                if item is not None:
                    yield item

    def _notice(self, m: InboundMessage) -> Notice | Control | None:
        form_id = (m.meta or {}).get("form_id")
        if m.kind in ("form_answer", "form_canceled") and form_id in self._approvals:
            self._settle(self._approvals[str(form_id)], m)
            return None  # an approval is the gate's, not the model's
        if m.kind == "control":
            action = m.content.strip().lower()
            if action in CONTROLS:
                reason = (m.meta or {}).get("reason")
                return Control(action, reason if isinstance(reason, str) else None)
            log.warning("an unknown control %r was ignored", m.content)
            return None
        task_id = (m.meta or {}).get("task_id") if m.kind == "task" else None
        if isinstance(task_id, str):
            origin = Origin(m.sender, task_id)
        elif m.to.startswith("#"):
            origin = Origin(m.to, reply_to=m.id, thread=m.thread)
        else:
            origin = Origin(m.sender, reply_to=m.id, thread=m.thread)
        key = f"hub:{next(self._keys)}"
        self._routes.remember(key, origin)
        return Notice(key, wrap([m], me=self.name))

    # --- approvals ---------------------------------------------------------------------------
    async def approve(self, subject: ToolCallSubject) -> Verdict:
        """Ask the operator, with a one-time form carrying the whole call, to approve exactly
        that call (the approve option carries its digest, which the hub checks against the
        call it shows); the verdict once the operator has answered, or a denial after
        `approve_timeout` seconds."""
        channel = await self._approval_channel()
        option = approve_option(subject.digest())
        field = {
            "key": FIELD,
            "label": f"Run {subject.tool} exactly as shown?"[:200],
            "type": "radio",
            "options": [option, DENY],
            "required": True,
        }
        form = await self.client.ask_operator(
            f"{self.name} asks to run {subject.tool}"[:200],
            [field],
            to=channel,
            call=subject.record(),
        )
        pending = self._approvals.get(form.form_id) or Pending(form.form_id, option)
        self._approvals[form.form_id] = pending
        try:
            return await asyncio.wait_for(asyncio.shield(pending.verdict), self._approve_timeout)
        except TimeoutError:
            why = f"no answer within {self._approve_timeout:g} s"
            await self._withdraw(form.form_id, f"timeout: {why}")
            return Verdict(False, why)
        finally:
            self._approvals.pop(form.form_id, None)

    async def _withdraw(self, form_id: str, reason: str) -> None:
        """The form of a call that will not run is canceled, so a late "approve" cannot land
        on the ledger for it, and it does not hold one of the agent's open forms."""
        try:
            await self.client.withdraw_form(form_id, reason)
        except CaucusError as exc:  # answered meanwhile, or the hub is away: nothing to undo
            log.info("approval %s was not withdrawn: %s", form_id, exc)

    async def report(self, subject: ToolCallSubject, changed: list[str]) -> None:
        """After an approved call: what its bound files hold now, where the operator saw the
        form (the agent's approvals channel)."""
        channel = await self._approval_channel()
        lines = "\n".join(f"- {line}" for line in changed)
        await self.client.send(channel, f"{subject.tool} ran; the files it named changed:\n{lines}")

    async def _approval_channel(self) -> str:
        """This agent's own channel for its approval forms, private: the calls and their
        answers reach it and the operator alone. If another identity holds the usual name
        (one that had this name before, or a squatter), a name of its own instead."""
        if self._approvals_channel is None:
            channel = "#" + f"approve-{self.name}"[:64]
            try:
                await self.client.join_channel(channel, private=True)
            except (ChannelPrivate, ChannelPublic):
                channel = "#" + f"approve-{self.name}"[:55] + "-" + secrets.token_hex(4)
                await self.client.join_channel(channel, private=True)
            self._approvals_channel = channel
        return self._approvals_channel

    def _settle(self, pending: Pending, m: InboundMessage) -> None:
        """Only the hub's own answer, for this form, asked by this agent, to its channel,
        choosing exactly the approve option, approves."""
        meta = m.meta or {}
        genuine = (
            m.sender == "operator"
            and meta.get("form_id") == pending.form_id
            and meta.get("asker") == self.name
            # The answer reaches the form's audience (the agent's channel); a cancel, the asker.
            and m.to in (self._approvals_channel, self.name)
        )
        if not genuine:
            log.warning(
                "an answer to approval %s did not come from the hub: ignored", pending.form_id
            )
            return
        if m.kind == "form_canceled":
            pending.settle(Verdict(False, "the operator canceled the request"))
            return
        answers = meta.get("answers")
        chosen = answers.get(FIELD) if isinstance(answers, dict) else None
        if chosen == pending.option:
            pending.settle(Verdict(True, "approved by the operator"))
        else:
            pending.settle(Verdict(False, f"the operator chose {chosen!r}"))

    # --- the driver's events -------------------------------------------------------------------
    def observe(self, event: Event) -> None:
        """Follow the turns: what each run answers, and where the answer goes."""
        ended = self._routes.follow(event)
        if isinstance(event, NewThreadRunCreated):
            self._set_status(COMPOSING)
        elif isinstance(event, NewThreadMessage):
            calls = event.message.tool_calls
            if calls:
                self._set_status(f"{RUNNING_TOOL} {', '.join(c.name for c in calls)}")
            elif event.message.role is Role.TOOL:
                self._set_status(COMPOSING)
        elif ended is not None:
            end, origin = ended
            self._set_status(INTERRUPTED if isinstance(end, ThreadRunInterrupted) else None)
            if origin is None:
                return
            if isinstance(end, ThreadRunComplete):
                self._spawn(self._answer(origin, end.reply))
            elif isinstance(end, ThreadRunFailed) and origin.task_id is not None:
                self._spawn(self._fail(origin.task_id, end.error))
            # ThreadRunInterrupted: nothing partial is posted
        elif isinstance(event, ThreadReset):
            self.quiet.clear()  # the operator's reset: answer everyone again
            self._replied.clear()
            self._resting = ""
            self._set_status(None)

    async def _answer(self, origin: Origin, reply: str) -> None:
        text = reply.strip()
        if not text or text == NO_REPLY:
            return
        if origin.task_id is None:
            if origin.to in self.quiet:
                log.info("not answering %s: the loop dampener holds it", origin.to)
                return
            if self._looping(origin.to):
                await self._dampen(origin.to)
                return
        try:
            if origin.task_id is not None:
                await self.client.reply_task(origin.task_id, text)
            else:
                await self._reply(origin, text)
            self.replies.append((origin, text))
        except CaucusError as exc:  # the task was settled by a tool, the peer left...
            log.warning("the reply to %s was not posted: %s", origin.to, exc)

    async def _reply(self, origin: Origin, text: str) -> None:
        """Threaded under the message it answers; if that message is gone (retention), the
        reply still goes, unthreaded."""
        try:
            await self.client.send(origin.to, text, reply_to=origin.reply_to, thread=origin.thread)
        except NotFound:
            if origin.reply_to is None:
                raise
            await self.client.send(origin.to, text)

    def _looping(self, to: str) -> bool:
        """Whether this reply would be the `loop_limit`-th to one place within the window:
        two agents answering each other without end."""
        now = self._clock.monotonic()
        sent = self._replied.setdefault(to, deque())
        while sent and now - sent[0] > LOOP_WINDOW:
            sent.popleft()
        if len(sent) >= self._loop_limit:
            return True
        sent.append(now)
        return False

    async def _dampen(self, to: str) -> None:
        """Stop answering `to`, and say so where the operator sees it: the agent's status, one
        last message (in the room's transcript), and an event on the agent's stdout. The
        operator's reset lifts it."""
        self.quiet.add(to)
        limit = self._loop_limit
        self.emit(LoopDampened(to, limit, LOOP_WINDOW))
        log.warning("%s and this agent answered each other %d times: not answering", to, limit)
        self._resting = f"not answering {', '.join(sorted(self.quiet))}: a reply loop; reset me"
        self._set_status(None)
        text = (
            f"I am not answering {to} any more: we have answered each other {limit} times in "
            f"{LOOP_WINDOW:.0f} s, which looks like a loop. The operator can reset me to resume."
        )
        try:
            await self.client.send(to, text)
        except CaucusError as exc:
            log.warning("the loop notice to %s was not posted: %s", to, exc)

    async def _fail(self, task_id: str, error: str) -> None:
        try:
            await self.client.fail_task(task_id, f"the agent's run failed: {error}")
        except CaucusError as exc:
            log.warning("task %s could not be failed: %s", task_id, exc)

    def _set_status(self, status: str | None) -> None:
        """Ask for a status (None: the one between runs). One writer applies them in order,
        the newest last, never holding a turn up for long."""
        self._wanted = self._resting if status is None else status
        if self._status_writer is None or self._status_writer.done():
            self._status_writer = asyncio.ensure_future(self._write_status())
            self._background.add(self._status_writer)
            self._status_writer.add_done_callback(self._background.discard)

    async def _write_status(self) -> None:
        """The hub budgets status updates (a few at once, then one every few seconds): when
        it says wait, wait, and then set whatever is wanted by then."""
        while self._wanted is not None and self._wanted != self._shown:
            wanted = self._wanted
            try:
                async with asyncio.timeout(self._status_timeout):
                    await self.client.set_status(wanted)
                self._shown = wanted
            except RateLimited as exc:
                await asyncio.sleep(min(max(exc.retry_after, 0.1), STATUS_WAIT_MAX))
            except (HubUnavailable, TimeoutError) as exc:  # a slow or restarting hub: again
                log.debug("the status was not set yet: %s", exc)
                await asyncio.sleep(1.0)
            except CaucusError as exc:  # refused (the agent was removed, say): give up
                log.debug("the status was not set: %s", exc)
                return

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
