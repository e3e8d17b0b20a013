"""`OperatorClient`: the operator API from Python (scripts, tests, the console's twin)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from caucus.client_base import BaseClient
from caucus.wire.activity import ActivityList, ToolCallInfo
from caucus.wire.console import SnapshotAt
from caucus.wire.deliberations import DeliberationInfo, DeliberationList
from caucus.wire.forms import DecisionList, DecisionRecord, FormInfo, FormList, LedgerStatusInfo
from caucus.wire.launcher import AgentOutput, LaunchedAgent, LaunchedList
from caucus.wire.messages import SendResult
from caucus.wire.peers import PeerInfo
from caucus.wire.reservations import ReservationPolicyInfo
from caucus.wire.retention import PurgeResult
from caucus.wire.room import (
    ChannelAccess,
    ChannelInfo,
    ClosedChannel,
    FloorInfo,
    ReopenedChannel,
    RoomState,
)
from caucus.wire.search import SearchResults, ThreadSummaryInfo
from caucus.wire.spawns import SpawnGrantInfo, TeammateInfo, TeammatesOverview
from caucus.wire.work import OfferInfo, OfferList


class OperatorClient(BaseClient):
    """Use with the operator token (or the observer token, for the read-only calls)."""

    async def snapshot(self) -> SnapshotAt:
        """What the live feed starts with: mode, rate, peers, channels, recent messages, floors,
        pending forms, health, and the event id to resume the feed after."""
        return await self._get(SnapshotAt, "/operator/snapshot")

    async def export(
        self, format: str = "json", *, since: str | None = None, until: str | None = None
    ) -> str:
        """The transcript as `json`, `markdown` or `text`; `since`/`until` take epoch seconds
        or ISO 8601."""
        params = {"format": format, "since": since, "until": until}
        return (await self._call("GET", "/export", params=params, read_timeout=120)).text

    async def state(self) -> RoomState:
        return await self._get(RoomState, "/operator/state")

    async def pause(self) -> RoomState:
        return await self._post(RoomState, "/operator/pause", {})

    async def set_reservation_policy(self, policy: str) -> ReservationPolicyInfo:
        """`advisory` (a conflicting reservation is granted and reported) or `enforce` (it is
        refused), for every hub process, from the next request on."""
        body = {"policy": policy}
        return await self._post(ReservationPolicyInfo, "/operator/reservations/policy", body)

    async def resume(self) -> RoomState:
        return await self._post(RoomState, "/operator/resume", {})

    async def stop(self, reason: str | None = None) -> RoomState:
        return await self._post(RoomState, "/operator/stop", _reason(reason))

    async def reset(self, reason: str | None = None) -> RoomState:
        return await self._post(RoomState, "/operator/reset", _reason(reason))

    async def say(
        self,
        to: str,
        content: str,
        *,
        thread: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> SendResult:
        body: dict[str, Any] = {"to": to, "content": content}
        if thread is not None:
            body["thread"] = thread
        if meta is not None:
            body["meta"] = meta
        return await self._post(SendResult, "/operator/say", body)

    async def announce(self, content: str, *, subject: str | None = None) -> SendResult:
        body: dict[str, Any] = {"content": content}
        if subject is not None:
            body["subject"] = subject
        return await self._post(SendResult, "/operator/announce", body)

    async def set_rate(self, capacity: float, refill: float) -> RoomState:
        body = {"capacity": capacity, "refill": refill}
        return await self._post(RoomState, "/operator/rate", body)

    async def kick(self, peer: str) -> PeerInfo:
        return await self._post(PeerInfo, f"/operator/peers/{peer}/kick", {})

    async def pause_peer(self, peer: str) -> PeerInfo:
        return await self._post(PeerInfo, f"/operator/peers/{peer}/pause", {})

    async def resume_peer(self, peer: str) -> PeerInfo:
        return await self._post(PeerInfo, f"/operator/peers/{peer}/resume", {})

    async def interrupt(self, peer: str, reason: str | None = None) -> SendResult:
        return await self._post(SendResult, f"/operator/peers/{peer}/interrupt", _reason(reason))

    async def reset_peer(self, peer: str, reason: str | None = None) -> SendResult:
        return await self._post(SendResult, f"/operator/peers/{peer}/reset", _reason(reason))

    async def stop_peer(self, peer: str, reason: str | None = None) -> SendResult:
        """Tell one peer to finish and stop; the room stays open."""
        return await self._post(SendResult, f"/operator/peers/{peer}/stop", _reason(reason))

    async def ping(self, peer: str) -> PeerInfo:
        return await self._get(PeerInfo, f"/operator/peers/{peer}/ping")

    async def clear_floor(self, scope: str) -> FloorInfo:
        """Free a scope's floor: 'all' or a '#channel'."""
        return await self._post(FloorInfo, f"/operator/floors/{scope.lstrip('#')}/clear", {})

    async def forms(self, state: str = "pending") -> list[FormInfo]:
        """Forms in one state (pending, answered, canceled) or `all`."""
        return (await self._get(FormList, "/operator/forms", params={"state": state})).forms

    async def offers(self, status: str | None = None) -> list[OfferInfo]:
        """The whole job board (optionally in one state), every poster's."""
        params = {"status": status} if status else None
        return (await self._get(OfferList, "/operator/offers", params=params)).offers

    async def purge(self, before: float | None = None, *, dry_run: bool = False) -> PurgeResult:
        """Drop finished items older than `before` now (default: the retention age)."""
        body = {"before": before, "dry_run": dry_run}
        return await self._post(PurgeResult, "/operator/purge", body)

    async def form(self, form_id: str) -> FormInfo:
        return await self._get(FormInfo, f"/operator/forms/{form_id}")

    async def answer_form(self, form_id: str, answers: dict[str, Any]) -> FormInfo:
        """Answer a pending form: field key to a string, or a list of strings (checkbox)."""
        body = {"answers": answers}
        return await self._post(FormInfo, f"/operator/forms/{form_id}/answer", body)

    async def cancel_form(self, form_id: str, reason: str | None = None) -> FormInfo:
        return await self._post(FormInfo, f"/operator/forms/{form_id}/cancel", _reason(reason))

    async def decisions(self, limit: int = 20) -> list[DecisionRecord]:
        """Every decision on the ledger, newest first."""
        params = {"limit": limit}
        return (await self._get(DecisionList, "/operator/decisions", params=params)).decisions

    async def search(self, q: str, **filters: Any) -> SearchResults:
        """Full-text search over every message and decision (`HubClient.search`'s filters)."""
        return await self._get(SearchResults, "/operator/search", params={"q": q, **filters})

    async def thread_summary(self, thread: str, *, model: bool = True) -> ThreadSummaryInfo:
        path = f"/operator/threads/{quote(thread, safe='')}/summary"
        params = {"model": "true" if model else "false"}
        return await self._get(ThreadSummaryInfo, path, params=params)

    async def deliberations(self) -> list[DeliberationInfo]:
        """Every deliberation this hub process runs or ran, newest first."""
        return (await self._get(DeliberationList, "/operator/deliberations")).deliberations

    async def ledger(self) -> LedgerStatusInfo:
        """Whether the decision ledger verifies now: records, intact, anchored, any break."""
        return await self._get(LedgerStatusInfo, "/operator/ledger")

    async def activity(
        self,
        *,
        limit: int = 200,
        caller: str | None = None,
        tool: str | None = None,
        errors: bool = False,
    ) -> list[ToolCallInfo]:
        """MCP tool calls, newest first (this hub process's last 2,000)."""
        params = {"limit": limit, "caller": caller, "tool": tool, "errors": errors}
        return (await self._get(ActivityList, "/operator/activity", params=params)).calls

    async def launch_agent(self, name: str, **options: Any) -> LaunchedAgent:
        """Start a native agent on the hub's machine (`LaunchRequest`'s fields as options:
        backend, model, prompt, tools, workdir…); it joins the room as `name`."""
        return await self._post(LaunchedAgent, "/operator/agents", {"name": name, **options})

    async def launched_agents(self) -> LaunchedList:
        return await self._get(LaunchedList, "/operator/agents")

    async def agent_output(self, launch_id: str, after: int = 0) -> AgentOutput:
        params = {"after": after}
        return await self._get(AgentOutput, f"/operator/agents/{launch_id}/output", params=params)

    async def stop_agent(self, launch_id: str) -> LaunchedAgent:
        """Stop a launched agent; returns once its process has ended."""
        return await self._post(LaunchedAgent, f"/operator/agents/{launch_id}/stop", {})

    async def teammates(self) -> TeammatesOverview:
        """The room's spawn grants and spawned teammates (newest first)."""
        return await self._get(TeammatesOverview, "/operator/teammates")

    async def grant_spawn(self, name: str, teammates: int = 1) -> SpawnGrantInfo:
        """Let `name` spawn teammates, `teammates` running at once."""
        path = f"/operator/peers/{quote(name, safe='')}/spawn-grant"
        response = await self._call("PUT", path, json={"teammates": teammates})
        return SpawnGrantInfo.model_validate_json(response.content)

    async def revoke_spawn(self, name: str) -> None:
        await self._call("DELETE", f"/operator/peers/{quote(name, safe='')}/spawn-grant")

    async def stop_teammate(self, spawn_id: str) -> TeammateInfo:
        path = f"/operator/teammates/{quote(spawn_id, safe='')}/stop"
        return await self._post(TeammateInfo, path, {})

    async def close_channel(self, channel: str) -> list[str]:
        found = await self._post(ClosedChannel, f"/operator/channels/{channel.lstrip('#')}/close")
        return found.members

    async def set_channel_private(self, channel: str, private: bool = True) -> ChannelInfo:
        """Make a channel private (joined on invitation, seen by its members) or public."""
        path = f"/operator/channels/{channel.lstrip('#')}/private"
        return await self._post(ChannelInfo, path, {"private": private})

    async def invite(self, channel: str, peer: str) -> bool:
        """Let `peer` join a private channel; False if it was invited already."""
        path = f"/operator/channels/{channel.lstrip('#')}/invite"
        return (await self._post(ChannelAccess, path, {"peer": peer})).changed

    async def remove_from_channel(self, channel: str, peer: str) -> bool:
        """Take `peer` out of a channel and withdraw its invitation."""
        path = f"/operator/channels/{channel.lstrip('#')}/remove"
        return (await self._post(ChannelAccess, path, {"peer": peer})).changed

    async def reopen_channel(self, channel: str) -> bool:
        """Open a closed channel again; False if it was open."""
        found = await self._post(
            ReopenedChannel, f"/operator/channels/{channel.lstrip('#')}/reopen"
        )
        return found.reopened


def _reason(reason: str | None) -> dict[str, Any]:
    return {"reason": reason} if reason is not None else {}
