"""`OperatorClient`: the operator API from Python (scripts, tests, the console's twin)."""

from __future__ import annotations

from typing import Any

from caucus.client import BaseClient, FormInfo, PeerInfo, SendResult, pick_fields


class OperatorClient(BaseClient):
    """Use with the operator token (or the observer token, for the read-only calls)."""

    async def _post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        return (await self._call("POST", path, json=body or {})).json()

    async def snapshot(self) -> dict[str, Any]:
        """What the live feed starts with: mode, rate, peers, channels, recent messages, floors,
        pending forms, health."""
        data: dict[str, Any] = (await self._call("GET", "/operator/snapshot")).json()
        return data

    async def export(
        self, format: str = "json", *, since: str | None = None, until: str | None = None
    ) -> str:
        """The transcript as `json`, `markdown` or `text`; `since`/`until` take epoch seconds
        or ISO 8601."""
        params = {"format": format, "since": since, "until": until}
        return (await self._call("GET", "/export", params=params, read_timeout=120)).text

    async def state(self) -> dict[str, Any]:
        data: dict[str, Any] = (await self._call("GET", "/operator/state")).json()
        return data

    async def pause(self) -> dict[str, Any]:
        data: dict[str, Any] = await self._post("/operator/pause")
        return data

    async def resume(self) -> dict[str, Any]:
        data: dict[str, Any] = await self._post("/operator/resume")
        return data

    async def stop(self, reason: str | None = None) -> dict[str, Any]:
        data: dict[str, Any] = await self._post("/operator/stop", _reason(reason))
        return data

    async def reset(self, reason: str | None = None) -> dict[str, Any]:
        data: dict[str, Any] = await self._post("/operator/reset", _reason(reason))
        return data

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
        return SendResult(**pick_fields(SendResult, await self._post("/operator/say", body)))

    async def announce(self, content: str, *, subject: str | None = None) -> SendResult:
        body: dict[str, Any] = {"content": content}
        if subject is not None:
            body["subject"] = subject
        return SendResult(**pick_fields(SendResult, await self._post("/operator/announce", body)))

    async def set_rate(self, capacity: float, refill: float) -> dict[str, Any]:
        data: dict[str, Any] = await self._post(
            "/operator/rate", {"capacity": capacity, "refill": refill}
        )
        return data

    async def kick(self, peer: str) -> PeerInfo:
        return PeerInfo(**pick_fields(PeerInfo, await self._post(f"/operator/peers/{peer}/kick")))

    async def pause_peer(self, peer: str) -> PeerInfo:
        return PeerInfo(**pick_fields(PeerInfo, await self._post(f"/operator/peers/{peer}/pause")))

    async def resume_peer(self, peer: str) -> PeerInfo:
        data = await self._post(f"/operator/peers/{peer}/resume")
        return PeerInfo(**pick_fields(PeerInfo, data))

    async def interrupt(self, peer: str, reason: str | None = None) -> SendResult:
        data = await self._post(f"/operator/peers/{peer}/interrupt", _reason(reason))
        return SendResult(**pick_fields(SendResult, data))

    async def reset_peer(self, peer: str, reason: str | None = None) -> SendResult:
        data = await self._post(f"/operator/peers/{peer}/reset", _reason(reason))
        return SendResult(**pick_fields(SendResult, data))

    async def ping(self, peer: str) -> PeerInfo:
        data = (await self._call("GET", f"/operator/peers/{peer}/ping")).json()
        return PeerInfo(**pick_fields(PeerInfo, data))

    async def clear_floor(self, scope: str) -> dict[str, Any]:
        """Free a scope's floor: 'all' or a '#channel'."""
        data: dict[str, Any] = await self._post(f"/operator/floors/{scope.lstrip('#')}/clear")
        return data

    async def forms(self, state: str = "pending") -> list[FormInfo]:
        """Forms in one state (pending, answered, canceled) or `all`."""
        data = (await self._call("GET", "/operator/forms", params={"state": state})).json()
        return [FormInfo(**pick_fields(FormInfo, f)) for f in data["forms"]]

    async def form(self, form_id: str) -> FormInfo:
        data = (await self._call("GET", f"/operator/forms/{form_id}")).json()
        return FormInfo(**pick_fields(FormInfo, data))

    async def answer_form(self, form_id: str, answers: dict[str, Any]) -> FormInfo:
        """Answer a pending form: field key to a string, or a list of strings (checkbox)."""
        data = await self._post(f"/operator/forms/{form_id}/answer", {"answers": answers})
        return FormInfo(**pick_fields(FormInfo, data))

    async def cancel_form(self, form_id: str, reason: str | None = None) -> FormInfo:
        data = await self._post(f"/operator/forms/{form_id}/cancel", _reason(reason))
        return FormInfo(**pick_fields(FormInfo, data))

    async def decisions(self, limit: int = 20) -> list[dict[str, Any]]:
        """Every decision on the ledger, newest first."""
        data = (await self._call("GET", "/operator/decisions", params={"limit": limit})).json()
        records: list[dict[str, Any]] = data["decisions"]
        return records

    async def ledger(self) -> dict[str, Any]:
        """Whether the decision ledger verifies now: records, intact, anchored, any break."""
        data: dict[str, Any] = (await self._call("GET", "/operator/ledger")).json()
        return data

    async def close_channel(self, channel: str) -> list[str]:
        data = await self._post(f"/operator/channels/{channel.lstrip('#')}/close")
        members: list[str] = data["members"]
        return members


def _reason(reason: str | None) -> dict[str, Any] | None:
    return {"reason": reason} if reason is not None else None
