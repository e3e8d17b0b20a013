"""The message log (every routed message, kept until retention drops it) and idempotency keys."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from caucus.domain.messages import Message, NewMessage, message_number
from caucus.domain.search import SearchQuery
from caucus.domain.visibility import Reader
from caucus.storage.engine import Row, Tx
from caucus.storage.rows import names_json, stored_json


def message(row: Row) -> Message:
    meta = row["meta"]
    return Message(
        seq=row["seq"],
        id=row["id"],
        ts=row["ts"],
        sender=row["sender"],
        to=row["target"],
        kind=row["kind"],
        content=row["content"],
        meta=stored_json(meta) if meta is not None else None,
        thread=row["thread"],
        reply_to=row["reply_to"],
        reply_seq=row["reply_seq"],
        reply_sender=row["reply_sender"],
    )


def page_params(
    before: int | None, limit: int, peer: str | None, channel: str | None, kind: str | None
) -> dict[str, Any]:
    """The parameters of a transcript page's statement (`messages_before` and the like)."""
    return {
        "before": before,
        "limit": limit,
        "peer": peer,
        "peer_json": json.dumps(peer) if peer is not None else None,
        "channel": channel,
        "kind": kind,
    }


def whole(row: Row) -> Message:
    found = message(row)
    found.delivered_to = stored_json(row["delivered_to"])
    return found


class Messages:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def insert(
        self,
        msg: NewMessage,
        thread: str | None,
        delivered_to: list[str],
        missed: list[str],
        recipient_id: int | None,
    ) -> int:
        """Store a routed message (a direct one with the id of the peer it reached); its
        seq."""
        row = self._row(msg, thread, delivered_to, missed, recipient_id)
        return self._tx.insert("message_insert", row)

    @staticmethod
    def _row(
        msg: NewMessage,
        thread: str | None,
        delivered_to: list[str],
        missed: list[str],
        recipient_id: int | None,
    ) -> dict[str, Any]:
        return {
            "id": msg.id,
            "ts": msg.ts,
            "sender_id": msg.sender_id,
            "sender": msg.sender,
            "target": msg.to,
            "kind": msg.kind,
            "content": msg.content,
            "meta": json.dumps(msg.meta) if msg.meta is not None else None,
            "thread": thread,
            "reply_to": msg.reply_to,
            "reply_seq": msg.reply_seq,
            "reply_sender": msg.reply_sender,
            "delivered_to": names_json(delivered_to),
            "missed": names_json(missed),
            "recipient_id": recipient_id,
        }

    def insert_routed(
        self,
        msg: NewMessage,
        thread: str | None,
        delivered_to: list[str],
        missed: list[str],
        peer_ids: list[int],
        recipient_id: int | None,
        *,
        lane: int,
        ephemeral: int,
    ) -> int:
        """Store a routed message and its deliveries to `peer_ids` in one statement; its seq.
        (Where each statement is a round trip to a server: `Inbox.append`.)"""
        return self._tx.insert(
            "message_insert_routed",
            {
                **self._row(msg, thread, delivered_to, missed, recipient_id),
                "peer_ids": self._tx.array(peer_ids),
                "lane": lane,
                "ephemeral": ephemeral,
            },
        )

    def insert_directs(
        self, items: Sequence[tuple[NewMessage, str, str | None]]
    ) -> Callable[[], list[tuple[int | None, str | None, str | None, int | None]]]:
        """Store direct messages (message, recipient's name, thread) and their deliveries to
        the peers those names reach, found in the same statement, sent now (`Tx.later`); the
        returned function reads, for each, (peer id, name, state, seq). No peer when nobody
        holds the name; no seq, with nothing written, when that peer is the sender.
        (PostgreSQL: `Inbox.append`.)"""
        tx = self._tx
        msgs = [m for m, _, _ in items]
        fetch = tx.later(
            "messages_insert_direct_many",
            {
                "ids": tx.array([m.id for m in msgs]),
                "tss": tx.array([m.ts for m in msgs]),
                "sender_ids": tx.array([m.sender_id for m in msgs]),
                "senders": tx.array([m.sender for m in msgs]),
                "names": tx.array([name for _, name, _ in items]),
                "targets": tx.array([m.to for m in msgs]),
                "kinds": tx.array([str(m.kind) for m in msgs]),
                "contents": tx.array([m.content for m in msgs]),
                "metas": tx.array([None if m.meta is None else json.dumps(m.meta) for m in msgs]),
                "threads": tx.array([thread for _, _, thread in items]),
                "reply_tos": tx.array([m.reply_to for m in msgs]),
                "reply_seqs": tx.array([m.reply_seq for m in msgs]),
                "reply_senders": tx.array([m.reply_sender for m in msgs]),
                "delivered": tx.array([names_json([name]) for _, name, _ in items]),
                "self_ids": tx.array([-1 if m.sender_id is None else m.sender_id for m in msgs]),
                "lanes": tx.array([int(m.lane) for m in msgs]),
                "ephemerals": tx.array([int(m.ephemeral) for m in msgs]),
            },
        )
        return lambda: [(r["peer_id"], r["peer_name"], r["state"], r["seq"]) for r in fetch()]

    def parent(self, ref: str, replier: int | None) -> Message | None:
        """The message a reply answers (its id, thread, number and sender), by its id or by the
        number a model sees (`#22`, `22`), if `replier` (a peer's id; None: the operator) may
        read it: a reply can neither probe nor borrow a thread it cannot read."""
        seq = message_number(ref)
        params: dict[str, Any] = {"reader": replier}
        if seq is None:
            row = self._tx.one("message_parent", {**params, "id": ref})
        else:
            row = self._tx.one("message_parent_by_seq", {**params, "seq": seq})
        if row is None:
            return None
        return Message(row["seq"], row["id"], 0.0, row["sender"], "", "", "", thread=row["thread"])

    def import_archived(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Append messages carried from another room (`message_import`: archived, without
        identities; one already here by id is skipped); how many were added."""
        return self._tx.many("message_import", rows)

    def by_seq(self, seq: int) -> tuple[Message, list[str], list[str]] | None:
        """A message with whom it reached and whom it missed."""
        row = self._tx.one("message_by_seq", {"seq": seq})
        if row is None:
            return None
        return message(row), stored_json(row["delivered_to"]), stored_json(row["missed"])

    def after(
        self, seq: int, limit: int, *, since: float | None = None, until: float | None = None
    ) -> list[Message]:
        """Routed messages after `seq` in seq order, with `delivered_to`; optionally only those
        with `since <= ts < until`."""
        params = {"seq": seq, "limit": limit, "since": since, "until": until}
        return [whole(r) for r in self._tx.all("messages_after", params)]

    def readable_after(
        self,
        seq: int,
        limit: int,
        reader: Reader | None,
        *,
        since: float | None = None,
        until: float | None = None,
    ) -> list[Message]:
        """As `after`, only what `reader` may read (`domain.visibility`; None: everything)."""
        params = {
            "seq": seq,
            "limit": limit,
            "since": since,
            "until": until,
            "reader": None if reader is None else reader.peer_id,
        }
        return [whole(r) for r in self._tx.all("messages_readable_after", params)]

    def before(
        self,
        before: int | None,
        limit: int,
        *,
        peer: str | None = None,
        channel: str | None = None,
        kind: str | None = None,
        query: SearchQuery | None = None,
    ) -> list[Message]:
        """The newest `limit` routed messages with seq < `before` (all, if None), in seq
        order, with `delivered_to`; optionally only those from, to or delivered to `peer`, to
        `channel`, of `kind`, or holding the words of `query` (through the search index)."""
        params = page_params(before, limit, peer, channel, kind)
        name = "messages_before"
        if query is not None:
            params |= {"match_fts": query.fts5(), "match_tsquery": query.tsquery()}
            name = "messages_before_matching"
        return [whole(r) for r in reversed(self._tx.all(name, params))]

    def last_seq(self) -> int:
        return int(self._tx.value("messages_last_seq"))

    def counts_by_sender(self, upto: int) -> dict[str, int]:
        """Messages sent, by sender name (agents only): those counted through `upto`, and
        the ones stored since."""
        counts = {r["sender"]: int(r["sent"]) for r in self._tx.all("sent_counts_all")}
        for r in self._tx.all("messages_by_sender_after", {"upto": upto}):
            counts[r["sender"]] = counts.get(r["sender"], 0) + int(r["sent"])
        return counts

    def count_more(self, upto: int, limit: int) -> int | None:
        """Count the senders of the next `limit` messages after `upto` at most; where that
        ended (None: nothing stored after `upto`)."""
        through = self._tx.value("messages_slice_end", {"upto": upto, "limit": limit})
        if through is None:
            return None
        self._tx.run("sent_counts_add", {"upto": upto, "through": through})
        return int(through)


class Idempotency:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def hit(self, sender_id: int, key: str, since: float) -> int | None:
        """The seq a repeat of (sender, key) newer than `since` first stored."""
        found = self._tx.value(
            "idempotency_hit", {"sender_id": sender_id, "key": key, "since": since}
        )
        return None if found is None else int(found)

    def record(self, sender_id: int, key: str, ts: float, seq: int) -> None:
        self._tx.run(
            "idempotency_record", {"sender_id": sender_id, "key": key, "ts": ts, "seq": seq}
        )

    def purge(self, before: float) -> int:
        return self._tx.run("idempotency_purge", {"before": before})
