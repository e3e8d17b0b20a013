"""The error body every HTTP answer that is not a success carries."""

from __future__ import annotations

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
