"""Watchers on the wire: the key a watcher holds, and the ticket a distant host redeems."""

from __future__ import annotations

import shlex

from pydantic import Field

from caucus.wire.fields import Wire


class WatchKey(Wire):
    name: str = Field(description="the peer whose messages the key waits for")
    key: str = Field(
        description="send it as `Authorization: Bearer` to GET /watch and POST /watch/ack; it "
        "does nothing else"
    )


class WatchTicket(Wire):
    name: str
    ticket: str = Field(description="single use: POST /watch/redeem trades it for a watch key")
    expires_at: float = Field(description="unix seconds; unused by then, it is void")
    command: str = Field(description="the command that redeems it and waits")


def ticket_command(hub_url: str, ticket: str) -> str:
    """What a host runs to redeem `ticket` and wait (its own `caucus`, on its own machine)."""
    return shlex.join(["caucus", "watch", "--hub", hub_url, "--ticket", ticket])
