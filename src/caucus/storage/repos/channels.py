"""Channels and who is in them."""

from __future__ import annotations

from caucus.domain.channels import Channel
from caucus.errors import ChannelClosed, NotFound
from caucus.storage.engine import Tx
from caucus.storage.repos.peers import Holder


class Channels:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def ensure(self, name: str, now: float, *, private: bool = False) -> None:
        """Create the channel unless it exists (as it is)."""
        self._tx.run("channel_insert", {"name": name, "now": now, "private": int(private)})

    def closed(self, name: str) -> bool | None:
        """Whether the operator closed `name`; None for no such channel."""
        row = self._tx.one("channel_closed_at", {"name": name})
        return None if row is None else row["closed_at"] is not None

    def private(self, name: str) -> bool | None:
        """Whether `name` is private; None for no such channel."""
        row = self._tx.one("channel_closed_at", {"name": name})
        return None if row is None else bool(row["private"])

    def set_private(self, name: str, private: bool) -> bool:
        """False for no such channel."""
        return self._tx.run("channel_set_private", {"name": name, "private": int(private)}) == 1

    def check_open(self, name: str) -> None:
        if self.closed(name):
            raise ChannelClosed(f"the operator closed {name}", channel=name)

    def get(self, name: str) -> Channel | None:
        found = self._listed(name)
        return found[0] if found else None

    def all(self) -> list[Channel]:
        return self._listed(None)

    def _listed(self, name: str | None) -> list[Channel]:
        if name is None:
            rows = self._tx.all("channels_all")
        else:
            rows = self._tx.all("channel_by_name", {"name": name})
        channels = {
            r["name"]: Channel(
                r["name"],
                r["topic"],
                r["created_at"],
                [],
                r["topic_by"],
                r["topic_at"],
                r["closed_at"],
                bool(r["private"]),
            )
            for r in rows
        }
        if channels:
            for r in self._tx.all("members_named", {"channel": name}):
                if r["channel"] in channels:
                    channels[r["channel"]].members.append(r["name"])
        return list(channels.values())

    def close(self, name: str, now: float) -> list[int]:
        """Close a channel: history kept, members removed, joins and sends refused from now.
        Returns the ids of its former members. NotFound for an unknown channel."""
        if self.closed(name) is None:
            raise NotFound(f"there is no channel {name}", channel=name)
        members = [r["peer_id"] for r in self._tx.all("members_ids", {"channel": name})]
        self._tx.run("members_delete", {"channel": name})
        self._tx.run("channel_close", {"name": name, "now": now})
        return members

    def reopen(self, name: str) -> bool:
        """Open a closed channel again (empty: its members left when it closed). False if it
        was open. NotFound for an unknown channel."""
        if self.closed(name) is None:
            raise NotFound(f"there is no channel {name}", channel=name)
        return self._tx.run("channel_reopen", {"name": name}) == 1

    def set_topic(self, name: str, topic: str, by: str, now: float) -> None:
        self._tx.run("channel_set_topic", {"name": name, "topic": topic, "by": by, "now": now})

    # --- membership ------------------------------------------------------------------------
    def add_member(self, name: str, peer_id: int, now: float) -> bool:
        """False if it already was one."""
        return self._tx.run("member_insert", {"channel": name, "peer_id": peer_id, "now": now}) == 1

    def remove_member(self, name: str, peer_id: int) -> bool:
        return self._tx.run("member_delete", {"channel": name, "peer_id": peer_id}) == 1

    def is_member(self, name: str, peer_id: int) -> bool:
        return self._tx.one("member_is", {"channel": name, "peer_id": peer_id}) is not None

    def membership_count(self, peer_id: int) -> int:
        return int(self._tx.value("memberships_count", {"peer_id": peer_id}))

    def of_peer(self, peer_id: int) -> list[str]:
        return [r["channel"] for r in self._tx.all("memberships_of_peer", {"peer_id": peer_id})]

    def forget_peer(self, peer_id: int) -> None:
        self._tx.run("memberships_of_peer_delete", {"peer_id": peer_id})
        self._tx.run("invites_of_peer_delete", {"peer_id": peer_id})

    # --- invitations to private channels ---------------------------------------------------
    def invite(self, name: str, peer_id: int, now: float) -> bool:
        """False if it already was invited."""
        return self._tx.run("invite_insert", {"channel": name, "peer_id": peer_id, "now": now}) == 1

    def invited(self, name: str, peer_id: int) -> bool:
        return self._tx.one("invite_is", {"channel": name, "peer_id": peer_id}) is not None

    def uninvite(self, name: str, peer_id: int) -> bool:
        return self._tx.run("invite_delete", {"channel": name, "peer_id": peer_id}) == 1

    def members_but(self, name: str, sender_id: int) -> list[Holder]:
        rows = self._tx.all("members_but", {"channel": name, "sender_id": sender_id})
        return [(r["id"], r["name"], r["state"]) for r in rows]
