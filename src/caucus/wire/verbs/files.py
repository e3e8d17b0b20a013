"""Rows of the verb table (`caucus.wire.verbs`): file reservations."""

from __future__ import annotations

from caucus.wire import queries as q
from caucus.wire import requests as rq
from caucus.wire.reservations import BlockedList, ReservationList
from caucus.wire.verb import Verb
from caucus.wire.verbs.errors import AGENT, RESERVATION, ROOM

RESERVE = Verb(
    "reserve",
    "POST",
    "/reservations",
    ReservationList,
    "Reserve paths or globs (granted with conflicts reported; refused where enforced)",
    AGENT,
    "reservations",
    {
        **RESERVATION,
        409: "reservation_conflict: the room enforces reservations and "
        "another agent holds an overlapping one (`conflicts` lists them)",
    },
    request=rq.ReserveRequest,
)


RESERVATIONS = Verb(
    "reservations",
    "GET",
    "/reservations",
    ReservationList,
    "The reservations that stand, oldest first",
    ROOM,
    "reservations",
    RESERVATION,
    query=q.ReservationsQuery,
)


RELEASE = Verb(
    "release",
    "POST",
    "/reservations/release",
    ReservationList,
    "Release your reservations, by id or pattern, or all of them",
    AGENT,
    "reservations",
    RESERVATION,
    request=rq.ReleaseRequest,
)


RENEW = Verb(
    "renew",
    "POST",
    "/reservations/renew",
    ReservationList,
    "Extend your reservations (those named, or all) from now",
    AGENT,
    "reservations",
    RESERVATION,
    request=rq.RenewRequest,
)


BLOCKED = Verb(
    "blocked",
    "POST",
    "/reservations/blocked",
    BlockedList,
    "Which of these files "
    "another agent's exclusive reservation covers (the pre-commit guard's question)",
    ROOM,
    "reservations",
    RESERVATION,
    request=rq.BlockedRequest,
)
