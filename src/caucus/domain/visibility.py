"""Who may read what (issue 47, ADR 0033): one rule, keyed by identity, never by a name.

A reader is a peer's id: the identity a token stands for, which a rename keeps and a name
taken again does not inherit. An agent reads a message it sent, a direct message to it (the
recipient's id is stored with the message as it is routed), a broadcast (the room is the
channel everyone is in), and the history of each channel it is a member of now. The operator
and the observer (a reader of None) read everything.

`may_read` is the rule in Python; the fragment `reader_may_read` in
`storage/sql/shared/queries.sql` is the same rule as SQL, and every statement that lists
messages for an agent (search, a thread's messages) names it. The property test
`tests/contract/test_who_reads.py` holds both to a model of the room on both backends.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass

BROADCAST = "all"


@dataclass(frozen=True, slots=True)
class Reader:
    """An agent reading: only its identity. None in its place is the operator (or the
    observer), who reads everything."""

    peer_id: int


def may_read(
    reader: Reader | None,
    *,
    sender_id: int | None,
    recipient_id: int | None,
    target: str,
    channels: Container[str],
) -> bool:
    """Whether `reader` may read a message from `sender_id` to `target` (a peer's name, the
    broadcast, or a #channel) that was routed to the identity `recipient_id` (a direct
    message's; None otherwise); `channels` are the reader's channels now."""
    if reader is None:
        return True
    me = reader.peer_id
    if sender_id == me or recipient_id == me or target == BROADCAST:
        return True
    return target.startswith("#") and target in channels


def may_see_task(reader: Reader | None, *, sender_id: int, worker_id: int) -> bool:
    """A task is its two parties' (and the operator's)."""
    return reader is None or reader.peer_id in (sender_id, worker_id)


def may_see_form(
    reader: Reader | None, *, asker_id: int, audience: str, channels: Container[str]
) -> bool:
    """A form is its asker's and its audience's: everyone for a broadcast one, a channel's
    members for a channel's."""
    if reader is None or reader.peer_id == asker_id or audience == BROADCAST:
        return True
    return audience in channels


def may_see_channel(reader: Reader | None, *, private: bool, member: bool) -> bool:
    """A private channel is seen (listed, searched, its topic and members read) by its
    members alone; others cannot tell it exists."""
    return reader is None or member or not private
