"""The room's caps, as functions over counts (issue 14: the rules move up).

Storage reads the counts inside the unit of work that would add one more, and calls these
there, so a cap stays atomic (ADR 0005) while the rule itself needs no database to test.
"""

from __future__ import annotations

from caucus.errors import (
    CapChannels,
    CapHourly,
    CapInterval,
    CapOpenForms,
    CapOpenOffers,
    CapPeers,
    Hint,
)

HOUR = 3600.0


def check_peers(held: int, max_peers: int) -> None:
    """`held`: peers active or away within their grace."""
    if held >= max_peers:
        raise CapPeers(
            f"the room holds {held} peers, its limit (peers_max); retry once some leave, or "
            "ask the operator to raise it",
            cap="peers_max",
            limit=max_peers,
        )


def check_channels(already_member: bool, count: int, max_channels: int, channel: str) -> None:
    """Joining a channel one is already in is never refused."""
    if not already_member and count >= max_channels:
        raise CapChannels(
            f"you are in {count} channels, the limit; leave one to join {channel}",
            hint=Hint.LIST_CHANNELS,
            cap="channels_per_peer_max",
            limit=max_channels,
        )


def check_announcement(
    now: float, last: float | None, in_last_hour: int, min_interval: float, hourly: int
) -> None:
    """`last`: the sender's latest announcement in the last hour; `in_last_hour`: how many."""
    if last is not None and now - last < min_interval:
        wait = min_interval - (now - last)
        raise CapInterval(
            f"one announcement per {min_interval:g} s: wait {wait:.0f} s",
            cap="interval",
            retry_after=round(wait, 3),
        )
    if in_last_hour >= hourly:
        raise CapHourly(
            f"at most {hourly} announcements per rolling hour; this sender has made {in_last_hour}",
            cap="hourly",
        )


def check_open_offers(open_now: int, max_open: int) -> None:
    """`open_now`: the poster's offers open or assigned and not past their TTL."""
    if open_now >= max_open:
        raise CapOpenOffers(
            f"at most {max_open} open offers per poster: resolve or withdraw one first",
            cap="open_offers",
        )


def check_pending_forms(pending: int, max_pending: int) -> None:
    if pending >= max_pending:
        raise CapOpenForms(
            f"you have {pending} forms waiting for the operator (at most {max_pending}): wait "
            "for an answer before asking more",
            cap="open_forms",
            limit=max_pending,
        )
