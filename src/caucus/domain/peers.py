"""Peers: identities that joined the hub, and how alive they are."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from caucus.errors import InvalidRequest

MAX_SKILLS = 32
MAX_DESCRIPTION = 1000
MAX_STATUS = 280


class PeerState(StrEnum):
    """The stored lifecycle state. `active` and `reaped` peers are revivable and hold their
    name; the rest are not. A peer whose session ended (it said goodbye) is `reaped` at once."""

    ACTIVE = "active"
    REAPED = "reaped"
    LEFT = "left"
    KICKED = "kicked"
    FORGOTTEN = "forgotten"

    @property
    def terminal(self) -> bool:
        return self in (PeerState.LEFT, PeerState.KICKED, PeerState.FORGOTTEN)


class Liveness(StrEnum):
    """Derived from the stored state, last_seen and listening."""

    ONLINE = "online"
    QUIET = "quiet"
    STALE = "stale"
    OFFLINE = "offline"  # its session ended and said so; its next join resumes it
    REAPED = "reaped"  # silent past the TTL; its next call with its token revives it


@dataclass(slots=True)
class Peer:
    id: int
    name: str
    token_hash: bytes
    state: PeerState
    created_at: float
    last_seen: float
    skills: list[dict[str, Any]] = field(default_factory=list)
    description: str = ""
    status: str = ""
    status_at: float | None = None
    reaped_at: float | None = None
    delivery_paused: bool = False  # the operator paused delivery of chatter to this peer
    offline_at: float | None = None  # when its session ended with a goodbye (it is reaped)


@dataclass(frozen=True, slots=True)
class PeerView:
    """A peer as others see it, at one moment."""

    name: str
    state: Liveness
    status: str
    status_age: float | None
    skills: list[dict[str, Any]]
    description: str
    last_seen_age: float
    listening: bool
    paused: bool
    uptime: float


def liveness(
    peer: Peer, *, now: float, listening: bool, quiet_after: float, stale_after: float
) -> Liveness:
    if peer.state is PeerState.REAPED:
        return Liveness.OFFLINE if peer.offline_at is not None else Liveness.REAPED
    if listening:
        return Liveness.ONLINE
    idle = now - peer.last_seen
    if idle < quiet_after:
        return Liveness.ONLINE
    if idle < stale_after:
        return Liveness.QUIET
    return Liveness.STALE


def normalize_skills(raw: Any) -> list[dict[str, Any]]:
    """Skills are `{id, name, description?, tags?}`; a bare string `s` means `{id: s, name: s}`."""
    if not isinstance(raw, list):
        raise InvalidRequest("skills must be a list", field="skills")
    if len(raw) > MAX_SKILLS:
        raise InvalidRequest(f"at most {MAX_SKILLS} skills", field="skills")
    out: list[dict[str, Any]] = []
    for item in raw:
        if isinstance(item, str):
            skill: dict[str, Any] = {"id": item, "name": item}
        elif isinstance(item, dict):
            skill = {}
            for key in ("id", "name", "description"):
                value = item.get(key)
                if value is not None:
                    if not isinstance(value, str):
                        raise InvalidRequest(f"skill {key} must be a string", field="skills")
                    skill[key] = value
            skill.setdefault("id", skill.get("name", ""))
            skill.setdefault("name", skill["id"])
            tags = item.get("tags")
            if tags is not None:
                if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                    raise InvalidRequest("skill tags must be a list of strings", field="skills")
                skill["tags"] = [t[:64] for t in tags[:16]]
            unknown = set(item) - {"id", "name", "description", "tags"}
            if unknown:
                raise InvalidRequest(
                    f"unknown skill field(s): {', '.join(sorted(unknown))}", field="skills"
                )
        else:
            raise InvalidRequest("each skill is a string or an object", field="skills")
        if not skill["id"] or len(skill["id"]) > 64 or len(skill["name"]) > 64:
            raise InvalidRequest("skill id and name are 1-64 characters", field="skills")
        if len(skill.get("description", "")) > 500:
            raise InvalidRequest("skill description is at most 500 characters", field="skills")
        out.append(skill)
    return out


def check_description(text: str) -> str:
    if len(text) > MAX_DESCRIPTION:
        raise InvalidRequest(
            f"description is at most {MAX_DESCRIPTION} characters", field="description"
        )
    return text


def check_status(text: str) -> str:
    if len(text) > MAX_STATUS:
        raise InvalidRequest(f"status is at most {MAX_STATUS} characters", field="status")
    if "\n" in text or "\r" in text:
        raise InvalidRequest("status is one line: remove the line breaks", field="status")
    return text


@dataclass(frozen=True, slots=True)
class Registration:
    """What joining returns: the identity, how it came about, and the protocol to read."""

    token: str | None  # None when the identity was resumed with a state handle
    peer: Peer
    outcome: str  # created | reaffirmed | resumed
    protocol_version: int
    protocol: str | None
    note: str | None


def ended(peer: Peer) -> str:
    """Why an ended identity's credentials no longer work, in words for its holder."""
    if peer.state is PeerState.LEFT:
        return f"the identity {peer.name!r} has left; its credentials no longer work"
    if peer.state is PeerState.KICKED:
        return f"the identity {peer.name!r} was removed by the operator"
    return f"the identity {peer.name!r} expired after being away past its grace period"
