"""`OperatorClient`: the operator API from Python (scripts, tests, the console's twin)."""

from __future__ import annotations

from typing import Any

from caucus.client_base import BaseClient
from caucus.wire.activity import ToolCallInfo
from caucus.wire.console import SnapshotAt
from caucus.wire.deliberations import DeliberationInfo
from caucus.wire.forms import DecisionRecord, FormInfo, LedgerStatusInfo
from caucus.wire.launcher import AgentOutput, LaunchedAgent, LaunchedList
from caucus.wire.messages import SendResult
from caucus.wire.peers import PeerInfo
from caucus.wire.reservations import ReservationPolicyInfo
from caucus.wire.retention import PurgeResult
from caucus.wire.room import (
    ChannelInfo,
    FloorInfo,
    RoomState,
)
from caucus.wire.search import SearchResults, ThreadSummaryInfo
from caucus.wire.spawns import SpawnGrantInfo, TeammateInfo, TeammatesOverview
from caucus.wire.verbs import control as c
from caucus.wire.verbs import oversight as o
from caucus.wire.work import OfferInfo


class OperatorClient(BaseClient):
    """Use with the operator token (or the observer token, for the read-only calls)."""

    async def snapshot(self) -> SnapshotAt:
        """What the live feed starts with: mode, rate, peers, channels, recent messages, floors,
        pending forms, health, and the event id to resume the feed after."""
        return await self.verb(o.SNAPSHOT)

    async def export(
        self, format: str = "json", *, since: str | None = None, until: str | None = None
    ) -> str:
        """The transcript as `json`, `markdown` or `text`; `since`/`until` take epoch seconds
        or ISO 8601."""
        params = {"format": format, "since": since, "until": until}
        return (await self._call("GET", "/export", params=params, read_timeout=120)).text

    async def state(self) -> RoomState:
        return await self.verb(c.ROOM_STATE)

    async def pause(self) -> RoomState:
        return await self.verb(c.PAUSE_ROOM)

    async def set_reservation_policy(self, policy: str) -> ReservationPolicyInfo:
        """`advisory` (a conflicting reservation is granted and reported) or `enforce` (it is
        refused), for every hub process, from the next request on."""
        return await self.verb(c.SET_RESERVATION_POLICY, policy=policy)

    async def resume(self) -> RoomState:
        return await self.verb(c.RESUME_ROOM)

    async def stop(self, reason: str | None = None) -> RoomState:
        return await self.verb(c.STOP_ROOM, reason=reason)

    async def reset(self, reason: str | None = None) -> RoomState:
        return await self.verb(c.RESET_ROOM, reason=reason)

    async def say(
        self,
        to: str,
        content: str,
        *,
        thread: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> SendResult:
        return await self.verb(c.OPERATOR_SAY, to=to, content=content, thread=thread, meta=meta)

    async def announce(self, content: str, *, subject: str | None = None) -> SendResult:
        return await self.verb(c.OPERATOR_ANNOUNCE, content=content, subject=subject)

    async def set_rate(self, capacity: float, refill: float) -> RoomState:
        return await self.verb(c.SET_RATE, capacity=capacity, refill=refill)

    async def kick(self, peer: str) -> PeerInfo:
        return await self.verb(c.KICK, name=peer)

    async def pause_peer(self, peer: str) -> PeerInfo:
        return await self.verb(c.PAUSE_PEER, name=peer)

    async def resume_peer(self, peer: str) -> PeerInfo:
        return await self.verb(c.RESUME_PEER, name=peer)

    async def interrupt(self, peer: str, reason: str | None = None) -> SendResult:
        return await self.verb(c.INTERRUPT, name=peer, reason=reason)

    async def reset_peer(self, peer: str, reason: str | None = None) -> SendResult:
        return await self.verb(c.RESET_PEER, name=peer, reason=reason)

    async def stop_peer(self, peer: str, reason: str | None = None) -> SendResult:
        """Tell one peer to finish and stop; the room stays open."""
        return await self.verb(c.STOP_PEER, name=peer, reason=reason)

    async def ping(self, peer: str) -> PeerInfo:
        return await self.verb(c.OPERATOR_PING, name=peer)

    async def clear_floor(self, scope: str) -> FloorInfo:
        """Free a scope's floor: 'all' or a '#channel'."""
        return await self.verb(c.CLEAR_FLOOR, scope=scope.lstrip("#"))

    async def forms(self, state: str = "pending") -> list[FormInfo]:
        """Forms in one state (pending, answered, canceled) or `all`."""
        return (await self.verb(o.OPERATOR_FORMS, state=state)).forms

    async def offers(self, status: str | None = None) -> list[OfferInfo]:
        """The whole job board (optionally in one state), every poster's."""
        return (await self.verb(o.ALL_OFFERS, status=status or None)).offers

    async def purge(self, before: float | None = None, *, dry_run: bool = False) -> PurgeResult:
        """Drop finished items older than `before` now (default: the retention age)."""
        return await self.verb(c.PURGE, before=before, dry_run=dry_run)

    async def form(self, form_id: str) -> FormInfo:
        return await self.verb(o.OPERATOR_FORM, form_id=form_id)

    async def answer_form(self, form_id: str, answers: dict[str, Any]) -> FormInfo:
        """Answer a pending form: field key to a string, or a list of strings (checkbox)."""
        return await self.verb(o.ANSWER_FORM, form_id=form_id, answers=answers)

    async def cancel_form(self, form_id: str, reason: str | None = None) -> FormInfo:
        return await self.verb(o.CANCEL_FORM, form_id=form_id, reason=reason)

    async def decisions(self, limit: int = 20) -> list[DecisionRecord]:
        """Every decision on the ledger, newest first."""
        return (await self.verb(o.OPERATOR_DECISIONS, limit=limit)).decisions

    async def search(self, q: str, **filters: Any) -> SearchResults:
        """Full-text search over every message and decision (`HubClient.search`'s filters)."""
        return await self.verb(o.OPERATOR_SEARCH, q=q, **filters)

    async def thread_summary(self, thread: str, *, model: bool = True) -> ThreadSummaryInfo:
        return await self.verb(o.OPERATOR_THREAD_SUMMARY, thread=thread, model=model)

    async def deliberations(self) -> list[DeliberationInfo]:
        """Every deliberation this hub process runs or ran, newest first."""
        return (await self.verb(o.OPERATOR_DELIBERATIONS)).deliberations

    async def ledger(self) -> LedgerStatusInfo:
        """Whether the decision ledger verifies now: records, intact, anchored, any break."""
        return await self.verb(o.LEDGER)

    async def activity(
        self,
        *,
        limit: int = 200,
        caller: str | None = None,
        tool: str | None = None,
        errors: bool = False,
    ) -> list[ToolCallInfo]:
        """MCP tool calls, newest first (this hub process's last 2,000)."""
        found = await self.verb(
            o.OPERATOR_ACTIVITY, limit=limit, caller=caller, tool=tool, errors=errors
        )
        return found.calls

    async def launch_agent(self, name: str, **options: Any) -> LaunchedAgent:
        """Start a native agent on the hub's machine (`LaunchRequest`'s fields as options:
        backend, model, prompt, tools, workdir…); it joins the room as `name`."""
        return await self.verb(o.LAUNCH_AGENT, name=name, **options)

    async def launched_agents(self) -> LaunchedList:
        return await self.verb(o.LAUNCHED_AGENTS)

    async def agent_output(self, launch_id: str, after: int = 0) -> AgentOutput:
        return await self.verb(o.AGENT_OUTPUT, launch_id=launch_id, after=after)

    async def stop_agent(self, launch_id: str) -> LaunchedAgent:
        """Stop a launched agent; returns once its process has ended."""
        return await self.verb(o.STOP_AGENT, launch_id=launch_id)

    async def teammates(self) -> TeammatesOverview:
        """The room's spawn grants and spawned teammates (newest first)."""
        return await self.verb(o.OPERATOR_TEAMMATES)

    async def grant_spawn(self, name: str, teammates: int = 1) -> SpawnGrantInfo:
        """Let `name` spawn teammates, `teammates` running at once."""
        return await self.verb(o.GRANT_SPAWN, name=name, teammates=teammates)

    async def revoke_spawn(self, name: str) -> None:
        await self.verb(o.REVOKE_SPAWN, name=name)

    async def stop_teammate(self, spawn_id: str) -> TeammateInfo:
        return await self.verb(o.STOP_ANY_TEAMMATE, spawn_id=spawn_id)

    async def close_channel(self, channel: str) -> list[str]:
        return (await self.verb(c.CLOSE_CHANNEL, channel=channel.lstrip("#"))).members

    async def set_channel_private(self, channel: str, private: bool = True) -> ChannelInfo:
        """Make a channel private (joined on invitation, seen by its members) or public."""
        return await self.verb(c.SET_CHANNEL_PRIVATE, channel=channel.lstrip("#"), private=private)

    async def invite(self, channel: str, peer: str) -> bool:
        """Let `peer` join a private channel; False if it was invited already."""
        return (await self.verb(c.INVITE, channel=channel.lstrip("#"), peer=peer)).changed

    async def remove_from_channel(self, channel: str, peer: str) -> bool:
        """Take `peer` out of a channel and withdraw its invitation."""
        found = await self.verb(c.REMOVE_FROM_CHANNEL, channel=channel.lstrip("#"), peer=peer)
        return found.changed

    async def reopen_channel(self, channel: str) -> bool:
        """Open a closed channel again; False if it was open."""
        return (await self.verb(c.REOPEN_CHANNEL, channel=channel.lstrip("#"))).reopened
