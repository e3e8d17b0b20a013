"""The error body every HTTP answer that is not a success carries."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from caucus.errors import Hint
from caucus.wire.fields import Wire, closed


class ErrorBody(Wire):
    error: str = Field(description="a stable machine-readable code")
    detail: str = Field(description="what went wrong")
    next: str | None = closed(
        Hint, "what to do next, as a stable code", nullable=True, default=None
    )
    hint: str | None = Field(None, description="what to do next, over HTTP")

    # What some refusals add, named in each code's row of docs/api.md's table of errors.
    field: str | None = Field(None, description="the input that is wrong (422, and some 403/404)")
    retry_after: float | None = Field(None, description="seconds before a retry may succeed")
    cap: str | None = Field(None, description="which cap was reached")
    limit: float | None = Field(None, description="the cap's or the budget's size")
    running: int | None = Field(None, description="how many run now (cap_teammates)")
    sections: list[str] | None = Field(None, description="the protocol's sections")
    name: str | None = Field(None, description="the name asked for (name_in_use)")
    holder_state: str | None = Field(None, description="whether the name's holder is here")
    last_active_at: float | None = Field(None, description="when the name's holder was last seen")
    frees_at: float | None = Field(None, description="when the name is free again")
    peer: str | None = Field(None, description="the peer named")
    to: str | None = Field(None, description="the addressee named")
    channel: str | None = Field(None, description="the channel named")
    scope: str | None = Field(None, description="the floor's scope")
    holder: str | None = Field(None, description="who holds what was asked for")
    pattern: str | None = Field(None, description="the reservation pattern named")
    conflicts: list[dict[str, Any]] | None = Field(
        None, description="the reservations a request overlaps (reservation_conflict)"
    )
    task_id: str | None = Field(None, description="the task named")
    offer_id: str | None = Field(None, description="the offer named")
    form_id: str | None = Field(None, description="the form named")
    spawn_id: str | None = Field(None, description="the teammate named")
    deliberation: str | None = Field(None, description="the deliberation named")
    state: str | None = Field(None, description="the state that refused the change (409)")
    cycle: list[str] | None = Field(None, description="the tasks a dependency would loop through")
