"""The errors the agent's verbs document, shared by rows of a kind (a route documents
every error it can give as its own; the walker in tests/interaction produces each)."""

from __future__ import annotations

from collections.abc import Mapping

from caucus.domain.control import Access

AGENT, ROOM, PUBLIC, WATCHER = Access.AGENT, Access.ROOM, Access.PUBLIC, Access.WATCHER

TOKEN = {401: "missing, unknown or ended token"}
MALFORMED = {**TOKEN, 422: "malformed input"}
WAITS = {**MALFORMED, 429: "you (or the room) hold as many waits as allowed"}
WATCH_KEY = {
    401: "missing or unknown watch key, or its peer ended",
    403: "a token instead of a watch key",
}
CHANNEL = {**TOKEN, 422: "invalid channel name"}
FLOOR_ERRORS = {
    **TOKEN,
    403: "not your floor, or not in the channel",
    422: "unknown action or scope",
}
FORM = {
    **TOKEN,
    403: "not a member of the channel, or not the operator",
    422: "a field or answer that does not fit the form",
    429: "cap_open_forms: too many of your forms pending",
}
TASK = {
    **MALFORMED,
    403: "you are the wrong party for this",
    404: "no such task (or not yours)",
    409: "the task's state does not allow it (already ended)",
}
OFFER = {
    **MALFORMED,
    403: "your own offer, or not your offer",
    404: "no such offer or claimant",
    409: "the offer is not open, or already claimed by you",
    429: "cap_open_offers, cap_interval or cap_hourly",
}
RESERVATION = {
    **TOKEN,
    422: "malformed input, or a path that is not relative",
    429: "cap_reservations: you hold as many as you may",
}
SEARCH_ERRORS = {
    **TOKEN,
    422: "no words to search for, or a bad filter",
    429: "this identity's search budget is spent",
    503: "the search ran past its time budget",
}
TEAMMATE = {
    **TOKEN,
    403: "spawn_not_granted: the operator has not given you the spawn grant; "
    "spawn_not_approved: a profile or tool not on the operator's list; launcher_disabled: "
    "the hub binds an address other machines reach",
    422: "malformed input: an empty prompt, a bad name",
    429: "cap_teammates: as many running as your grant (or the room) allows",
}
PANEL = {
    **TOKEN,
    403: "not a member of the panel's channel",
    422: "a field out of range, or a position that breaks a rule",
}


def without(errors: Mapping[int, str], *statuses: int) -> dict[int, str]:
    return {k: v for k, v in errors.items() if k not in statuses}
