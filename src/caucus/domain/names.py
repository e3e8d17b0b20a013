"""Names of peers and channels, and the targets a message can be addressed to."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from caucus.errors import InvalidRequest

NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
# The system senders (operator, hub) and words that would read as one.
RESERVED_NAMES = frozenset({"all", "human", "operator", "hub", "system"})
BROADCAST = "all"


_INVALID = re.compile(r"[^A-Za-z0-9._-]+")


def name_from(text: str) -> str | None:
    """A valid peer name made from free text (a directory, a client's name), or None."""
    base = _INVALID.sub("-", text).strip("-.")[:64].strip("-.")
    if not base or base.lower() in RESERVED_NAMES:
        return None
    return base


def _only_dots(name: str) -> bool:
    # '.' and '..' are path segments to every URL resolver; a peer named so would turn
    # /operator/peers/{name}/pause into a room-wide route. Any all-dot name reads as one.
    return not name.strip(".")


def check_peer_name(name: str) -> str:
    if not NAME_RE.fullmatch(name) or _only_dots(name):
        raise InvalidRequest(
            f"invalid name {name!r}: use 1-64 letters, digits, '.', '_' or '-', not only dots",
            field="name",
        )
    if name.lower() in RESERVED_NAMES:
        raise InvalidRequest(
            f"the name {name!r} is reserved; reserved names are "
            + ", ".join(sorted(RESERVED_NAMES)),
            field="name",
        )
    return name


def check_channel_name(channel: str) -> str:
    """Return the canonical `#name` form; a missing leading '#' is accepted."""
    bare = channel[1:] if channel.startswith("#") else channel
    if not NAME_RE.fullmatch(bare) or _only_dots(bare):
        raise InvalidRequest(
            f"invalid channel {channel!r}: use '#' then 1-64 letters, digits, '.', '_' or '-'",
            field="channel",
        )
    return "#" + bare


class TargetKind(StrEnum):
    PEER = "peer"
    ALL = "all"
    CHANNEL = "channel"


@dataclass(frozen=True, slots=True)
class Target:
    kind: TargetKind
    name: str  # peer name, "all", or "#channel"


def parse_target(to: str) -> Target:
    if to == BROADCAST:
        return Target(TargetKind.ALL, BROADCAST)
    if to.startswith("#"):
        return Target(TargetKind.CHANNEL, check_channel_name(to))
    if not NAME_RE.fullmatch(to):
        raise InvalidRequest(
            f"invalid recipient {to!r}: use a peer name, 'all', or '#channel'", field="to"
        )
    if to.lower() in RESERVED_NAMES:
        raise InvalidRequest(
            f"{to!r} is not a peer; address a peer by name, 'all', or a '#channel'", field="to"
        )
    return Target(TargetKind.PEER, to)
