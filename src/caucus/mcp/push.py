"""Pushing messages into a live host session: the burst settler, and Claude Code channels.

The settler is shared by every push path. Once messages arrive it keeps gathering until the
hub has been quiet for `gap` seconds or `cap` seconds have passed since the first, so three
messages 0.3 s apart are one event, not three interruptions; urgent items (the operator's
messages and controls) go at once. Nothing is acknowledged while a burst settles: what is
claimed and not pushed comes back after the visibility timeout.

Channel push (`CAUCUS_CLAUDE_CHANNEL=1`): the bridge declares the experimental `claude/channel`
capability and sends `notifications/claude/channel` events. The handshake does not say whether
the host registered the channel, so the inbox is never drained on faith: the bridge first pushes
a probe carrying a random nonce, and goes live only when the agent calls
`confirm_delivery(nonce)`. Until then the watcher keeps delivering. Once live the bridge holds
the receive slot (a running watcher ends DISPLACED) and `listen` answers `channel_mode`. A 401
(kicked, left) ends pushing without registering again, so a kick holds. The guarantee is at
most once into the host's input: an event is acknowledged once it is written to the host.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Any, Protocol

from pydantic import Field

from caucus.client import HubClient
from caucus.domain.messages import MessageKind, SystemSender
from caucus.errors import CaucusError, InvalidRequest, Unauthorized
from caucus.models.envelope import wrap
from caucus.wire.fields import Wire, closed
from caucus.wire.messages import InboundMessage

log = logging.getLogger(__name__)

CHANNEL_CAPABILITY = "claude/channel"
CHANNEL_METHOD = "notifications/claude/channel"
URGENT_KINDS = frozenset({MessageKind.OPERATOR.value, MessageKind.CONTROL.value})

More = Callable[[float], Awaitable[list[InboundMessage]]]


def is_urgent(m: InboundMessage) -> bool:
    """The operator's words and controls (stop, interrupt, reset) never wait for a burst."""
    return m.sender == SystemSender.OPERATOR.value or m.kind in URGENT_KINDS


async def settle(
    first: list[InboundMessage],
    more: More,
    *,
    gap: float,
    cap: float,
    clock: Callable[[], float] | None = None,
) -> list[InboundMessage]:
    """`first`, and what arrives after it until the hub is quiet for `gap` seconds, `cap`
    seconds have passed since `first`, or something urgent arrives. `more(t)` waits up to `t`
    seconds for the next messages (claimed, not acknowledged)."""
    now = clock or asyncio.get_running_loop().time
    burst = list(first)
    until = now() + cap
    while not any(is_urgent(m) for m in burst):
        wait = min(gap, until - now())
        if wait <= 0:
            break
        arrived = await more(wait)
        if not arrived:
            break  # quiet for the whole gap
        burst.extend(arrived)
    return burst


class ChannelMode(StrEnum):
    OFF = "off"  # the host never confirmed: the watcher delivers
    PROBING = "probing"  # a probe was pushed; waiting for confirm_delivery
    LIVE = "live"  # messages are pushed into the conversation
    ENDED = "ended"  # the identity ended (kicked, left): nothing more is pushed


class ChannelState(Wire):
    mode: str = closed(ChannelMode)
    note: str = Field(description="what this means for you")


class Notify(Protocol):
    async def __call__(self, method: str, params: dict[str, Any]) -> None: ...


def event_params(burst: list[InboundMessage], me: str | None) -> dict[str, Any]:
    """One channel event: the burst fenced as untrusted data; string meta from the hub."""
    senders = list(dict.fromkeys(m.sender for m in burst))
    kinds = list(dict.fromkeys(m.kind for m in burst))
    meta = {
        "source": "caucus",
        "sender": ",".join(senders),
        "kind": ",".join(kinds),
        "seq": str(burst[-1].seq),
        "count": str(len(burst)),
    }
    return {"content": wrap(burst, me=me), "meta": meta}


class ChannelPush:
    """The bridge's push into a Claude Code session, from probe to live to ended."""

    def __init__(self, client: HubClient, *, gap: float, cap: float, poll: float = 25.0) -> None:
        self.client = client
        self.gap = gap
        self.cap = cap
        self.poll = poll
        self.mode = ChannelMode.OFF
        self._nonce: str | None = None
        self._notify: Notify | None = None
        self._me: str | None = None
        self._task: asyncio.Task[None] | None = None
        self.pushed = 0  # events written to the host (for tests and the status line)

    @property
    def live(self) -> bool:
        return self.mode is ChannelMode.LIVE

    async def probe(self, notify: Notify, me: str) -> None:
        """Push the probe: its nonce comes back only if the host shows channel events."""
        if self.mode in (ChannelMode.LIVE, ChannelMode.ENDED):
            return
        self._notify, self._me = notify, me
        self._nonce = secrets.token_hex(8)
        self.mode = ChannelMode.PROBING
        await notify(
            CHANNEL_METHOD,
            {
                "content": "Caucus channel check: if you can read this, call the "
                f"confirm_delivery tool with nonce {self._nonce!r}. From then on, messages "
                "from the room arrive here by themselves.",
                "meta": {"source": "caucus", "kind": "probe"},
            },
        )

    def confirm(self, nonce: str) -> ChannelState:
        if self.mode is ChannelMode.LIVE:
            return ChannelState(mode=self.mode, note="already live: messages arrive here")
        if self.mode is not ChannelMode.PROBING or self._nonce is None:
            raise InvalidRequest(
                "no channel probe is waiting: channel mode needs CAUCUS_CLAUDE_CHANNEL=1 and a "
                "join",
                field="nonce",
            )
        if not secrets.compare_digest(nonce.strip().strip("'\""), self._nonce):
            raise InvalidRequest("that is not the nonce the probe carried", field="nonce")
        self.mode = ChannelMode.LIVE
        self._task = asyncio.ensure_future(self._run())
        return ChannelState(
            mode=self.mode,
            note="live: messages from the room now arrive in this conversation by themselves; "
            "do not call listen or run a watcher",
        )

    async def _run(self) -> None:
        assert self._notify is not None
        try:
            while self.mode is ChannelMode.LIVE:
                batch = await self.client.receive(timeout=self.poll, auto_ack=False)
                if not batch.messages:
                    continue
                burst = await settle(batch.messages, self._more, gap=self.gap, cap=self.cap)
                await self._notify(CHANNEL_METHOD, event_params(burst, self._me))
                self.pushed += 1
                await self.client.ack(seqs=[m.seq for m in burst])
        except Unauthorized:
            self.mode = ChannelMode.ENDED  # kicked or left: a kick holds
            log.warning("the hub ended this identity: channel push stopped")
        except CaucusError as exc:
            self.mode = ChannelMode.OFF  # the watcher path takes over again
            log.warning("channel push stopped: %s", exc)

    async def _more(self, wait: float) -> list[InboundMessage]:
        return (await self.client.receive(timeout=wait, auto_ack=False)).messages

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.mode is ChannelMode.LIVE:
            self.mode = ChannelMode.OFF
