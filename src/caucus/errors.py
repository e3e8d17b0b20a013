"""The one error tree of Caucus.

Every failure a caller can cause or observe is a `CaucusError` subclass with a stable
machine-readable `code` and an HTTP `status`. Transports map this tree to their wire format in
exactly one place each (`web/errors.py` for HTTP; for MCP, `mcp/server.py` for a tool's failed
result and `mcp/protocol_errors.py` for a protocol error; `api/a2a/door.py` for A2A); the
client maps codes back to these classes, so a caller catches the same exception whether it
talks in-process or over HTTP.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar


class Hint(StrEnum):
    """What the caller should do next, named without a transport: HTTP says it as a route,
    MCP as the tool to call (`web/errors.py`, `mcp/hints.py`). Values are stable wire codes."""

    REGISTER = "register"  # get an identity (again)
    RESUME = "resume"  # come back as the peer that holds the name, with its credentials
    AGENT_KEY = "agent_key"  # the hub wants its agent key
    LIST_PEERS = "list_peers"
    LIST_CHANNELS = "list_channels"
    JOIN_CHANNEL = "join_channel"
    RAISE_HAND = "raise_hand"
    LIST_TASKS = "list_tasks"
    LIST_OFFERS = "list_offers"
    LIST_FORMS = "list_forms"
    PROTOCOL = "protocol"
    RETRY_LATER = "retry_later"


class CaucusError(Exception):
    """Base of every error Caucus reports to a caller.

    `detail` says what went wrong in words any transport can show; `hint` names what to do
    next, and each transport renders it in its own terms."""

    code: ClassVar[str] = "error"
    status: ClassVar[int] = 500

    def __init__(self, detail: str, *, hint: Hint | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.hint = hint
        self.extra: dict[str, Any] = extra

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.code, "detail": self.detail}
        if self.hint is not None:
            body["next"] = self.hint.value
        body.update(self.extra)
        return body


class InvalidRequest(CaucusError):
    code = "invalid_request"
    status = 422


class MalformedBody(CaucusError):
    """The request body is not JSON the hub can keep (`web/body.py` says which way)."""

    code = "malformed_body"
    status = 400


class MalformedRequest(CaucusError):
    """A request head the hub cannot take at its word (two Host headers: which one is it?)."""

    code = "malformed_request"
    status = 400


class UnsupportedMediaType(CaucusError):
    code = "unsupported_media_type"
    status = 415


class Unauthorized(CaucusError):
    code = "unauthorized"
    status = 401


class NotJoined(Unauthorized):
    """An MCP session called a tool that needs an identity before joining."""

    code = "not_joined"


class TicketRejected(Unauthorized):
    """A watch ticket that is unknown, already redeemed, expired, or whose peer has ended."""

    code = "ticket_rejected"


class Forbidden(CaucusError):
    code = "forbidden"
    status = 403


class LauncherDisabled(Forbidden):
    """This hub launches no agents (it binds an address other machines reach)."""

    code = "launcher_disabled"


class SpawnNotGranted(Forbidden):
    """The agent has no spawn grant: only the operator gives one."""

    code = "spawn_not_granted"


class SpawnNotApproved(Forbidden):
    """A model profile or a tool that is not on the operator's list."""

    code = "spawn_not_approved"


class ChannelPrivate(Forbidden):
    """A private channel: joining it takes the operator's invitation, posting being in it."""

    code = "channel_private"


class NotFound(CaucusError):
    code = "not_found"
    status = 404


class Conflict(CaucusError):
    code = "conflict"
    status = 409


class NameInUse(Conflict):
    code = "name_in_use"


class NameTaken(Conflict):
    """A revived identity's name now belongs to another peer."""

    code = "name_taken"


class RoomStopped(Conflict):
    """The operator stopped the room: sends are refused until it resumes."""

    code = "room_stopped"


class InChannelMode(Conflict):
    """This MCP session's messages are pushed into the conversation: nothing to listen for."""

    code = "channel_mode"


class ChannelClosed(Conflict):
    code = "channel_closed"


class FormClosed(Conflict):
    """A form that was answered or canceled already (a late answer to an approval that timed
    out, say): it takes no other answer."""

    code = "form_closed"


class ChannelPublic(Conflict):
    """A private channel was asked for under the name of an existing public one."""

    code = "channel_public"


class ReservationsHeld(Conflict):
    """Another agent holds a reservation the request would overlap, and the room enforces
    reservations (`conflicts` lists them)."""

    code = "reservation_conflict"


class FloorHeld(CaucusError):
    """Another peer holds the floor of the scope this send addressed."""

    code = "floor_held"
    status = 423


class CapExceeded(CaucusError):
    """A per-sender cap refused the request; the code names the cap and nothing was stored."""

    code = "cap_exceeded"
    status = 429


class CapPayloadSize(CapExceeded):
    code = "cap_payload_size"
    status = 413


class CapSubjectLength(CapExceeded):
    code = "cap_subject_length"
    status = 422


class CapInterval(CapExceeded):
    code = "cap_interval"


class CapHourly(CapExceeded):
    code = "cap_hourly"


class CapOpenOffers(CapExceeded):
    code = "cap_open_offers"


class CapOpenForms(CapExceeded):
    code = "cap_open_forms"


class CapPeers(CapExceeded):
    """The room holds as many peers as it may (`peers_max`)."""

    code = "cap_peers"
    status = 503


class CapReservations(CapExceeded):
    code = "cap_reservations"


class CapTeammates(CapExceeded):
    code = "cap_teammates"


class CapChannels(CapExceeded):
    code = "cap_channels"


class CapHands(CapExceeded):
    code = "cap_hands"


class CapStreams(CapExceeded):
    """A caller holds as many streams and waits open as it may, or the room does (`cap`:
    `streams_per_identity` or `streams_room`)."""

    code = "cap_streams"


class CapSessions(CapExceeded):
    """Too many MCP sessions that have not joined (`mcp_unjoined_max`)."""

    code = "cap_sessions"
    status = 503


class MisdirectedRequest(CaucusError):
    """The Host header names a host this hub does not serve (DNS rebinding defence)."""

    code = "misdirected_request"
    status = 421


class PayloadTooLarge(CaucusError):
    code = "payload_too_large"
    status = 413


class RateLimited(CaucusError):
    code = "rate_limited"
    status = 429

    def __init__(self, detail: str, retry_after: float, **extra: Any) -> None:
        extra.setdefault("hint", Hint.RETRY_LATER)
        super().__init__(detail, retry_after=round(retry_after, 3), **extra)
        self.retry_after = retry_after


class StorageFull(CaucusError):
    code = "storage_full"
    status = 507


class StorageError(CaucusError):
    code = "storage_error"
    status = 503


class LedgerIntegrityError(CaucusError):
    """The decision ledger fails verification, so nothing more is appended to it."""

    code = "ledger_integrity"
    status = 500


class QueryTimeout(CaucusError):
    """A costly read (a search, a summary) ran past its time budget, or could not start
    within it: the hub is busy, or the read asks for too much."""

    code = "query_timeout"
    status = 503

    def __init__(self, detail: str, retry_after: float = 5.0, **extra: Any) -> None:
        extra.setdefault("hint", Hint.RETRY_LATER)
        super().__init__(detail, retry_after=round(retry_after, 3), **extra)


class HubUnavailable(CaucusError):
    """The client could not reach the hub at all (no HTTP answer)."""

    code = "hub_unavailable"
    status = 503


ERRORS_BY_CODE: dict[str, type[CaucusError]] = {
    cls.code: cls
    for cls in (
        CaucusError,
        InvalidRequest,
        MalformedBody,
        MalformedRequest,
        UnsupportedMediaType,
        Unauthorized,
        NotJoined,
        TicketRejected,
        Forbidden,
        LauncherDisabled,
        SpawnNotGranted,
        SpawnNotApproved,
        ChannelPrivate,
        NotFound,
        Conflict,
        NameInUse,
        NameTaken,
        RoomStopped,
        ChannelClosed,
        ChannelPublic,
        FormClosed,
        InChannelMode,
        ReservationsHeld,
        MisdirectedRequest,
        FloorHeld,
        CapExceeded,
        CapPayloadSize,
        CapSubjectLength,
        CapInterval,
        CapHourly,
        CapOpenOffers,
        CapOpenForms,
        CapPeers,
        CapReservations,
        CapTeammates,
        CapChannels,
        CapHands,
        CapStreams,
        CapSessions,
        PayloadTooLarge,
        RateLimited,
        StorageFull,
        StorageError,
        LedgerIntegrityError,
        QueryTimeout,
        HubUnavailable,
    )
}


def error_from_body(status: int, body: Any) -> CaucusError:
    """Rebuild the exception a hub response describes (used by the client)."""
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        code = body["error"]
        detail = str(body.get("detail", code))
        cls = ERRORS_BY_CODE.get(code)
        extra = {k: v for k, v in body.items() if k not in ("error", "detail", "next", "hint")}
        try:
            hint: Hint | None = Hint(body["next"]) if "next" in body else None
        except ValueError:  # a hint from a newer hub: the detail still says it
            hint = None
        if cls is RateLimited:
            extra.pop("retry_after", None)
            return RateLimited(
                detail, retry_after=float(body.get("retry_after", 1.0)), hint=hint, **extra
            )
        if cls is not None:
            return cls(detail, hint=hint, **extra)
        err = CaucusError(detail, hint=hint, **extra)
        err.code = code  # type: ignore[misc]  # an unknown code from a newer hub stays visible
        return err
    return CaucusError(f"hub answered HTTP {status} without an error body")


_PLACES = ("body", "query", "path", "header")


def invalid_input(
    errors: list[Any], *, prefix: str = "", skip: tuple[str, ...] = _PLACES
) -> InvalidRequest:
    """Pydantic's errors as the one refusal every door gives: a sentence, and `field`, the
    dotted path of the first field that is wrong (as a hand-written check names it)."""
    detail = describe_validation(errors, skip=skip)
    field = _field_of(errors[0], skip) if errors else None
    return InvalidRequest(f"{prefix}{detail}", field=field or "body")


def _field_of(error: Any, skip: tuple[str, ...]) -> str | None:
    if error.get("type") == "json_invalid":
        return None
    loc = [str(p) for p in error.get("loc", ()) if p not in skip]
    return ".".join(loc) or None


def describe_validation(errors: list[Any], *, skip: tuple[str, ...] = _PLACES) -> str:
    """One plain sentence for a list of pydantic errors: where, and what is wrong."""
    parts = []
    for err in errors[:5]:
        loc = [str(p) for p in err.get("loc", ()) if p not in skip]
        where = ".".join(loc) or "body"
        kind = err.get("type", "")
        msg = str(err.get("msg", "invalid"))
        if kind == "extra_forbidden":
            msg = "unknown field"
            if where == "sender":
                msg = "unknown field: the sender comes from your token"
        elif kind == "missing":
            msg = "is required"
        elif kind == "json_invalid":
            where, msg = "body", "is not valid JSON"
        parts.append(f"{where}: {msg}")
    return "; ".join(parts) or "invalid request"
