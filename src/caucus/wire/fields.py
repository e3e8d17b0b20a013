"""Field helpers for the wire models."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from caucus.errors import InvalidRequest

# The largest integer the hub keeps (SQLite's INTEGER); anything past it is refused, not stored.
MAX_INT = 2**63 - 1
# Where a moment is given as epoch seconds: year 1 to year 9999, so every one can be printed.
EPOCH_MIN, EPOCH_MAX = -62135596800.0, 253402300799.0


class Wire(BaseModel):
    """Base of every wire model. Unknown fields from a newer hub are ignored, not refused;
    models are built from domain values with `model_construct` (no re-validation of what the
    hub itself made) and parsed with validation when they arrive over the wire."""

    model_config = ConfigDict(extra="ignore")

    @classmethod  # the same signature; pydantic's mypy plugin just names it differently
    def model_construct(  # type: ignore[override]
        cls, _fields_set: set[str] | None = None, **values: Any
    ) -> Self:
        """pydantic's `model_construct`, five times faster when every field is given (as the
        hub's own `.of()` builders do, several times per request on the hot routes): the
        instance gets exactly what pydantic's would, without its walk over defaults."""
        if _fields_set is not None or values.keys() != cls.__pydantic_fields__.keys():
            return super().model_construct(_fields_set, **values)
        built = cls.__new__(cls)
        object.__setattr__(built, "__dict__", values)
        object.__setattr__(built, "__pydantic_fields_set__", set(values))
        object.__setattr__(built, "__pydantic_extra__", None)
        object.__setattr__(built, "__pydantic_private__", None)
        return built


def closed(
    kind: type[StrEnum], description: str | None = None, *, nullable: bool = False, **kw: Any
) -> Any:
    """A string field whose values are `kind`'s: an `enum` in every schema (with null where the
    field is optional). The field holds a plain string, so a value from a newer hub still
    parses and serializes."""
    values: list[JsonValue] = [m.value for m in kind]
    if nullable:
        values.append(None)
    return Field(description=description, json_schema_extra={"enum": values}, **kw)


def parse_time(value: str | None, name: str) -> float | None:
    """Epoch seconds, or an ISO 8601 date/time (UTC unless it says otherwise)."""
    if value is None or value == "":
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        if not EPOCH_MIN <= seconds <= EPOCH_MAX:  # nan and inf fail this too
            raise InvalidRequest(
                f"{name}: epoch seconds must be a finite time between year 1 and 9999",
                field=name,
            )
        return seconds
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidRequest(
            f"{name}: give epoch seconds or an ISO 8601 time like 2026-11-30T09:00:00Z",
            field=name,
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.timestamp()
    except (OverflowError, ValueError):  # 0001-01-01 with a positive offset
        raise InvalidRequest(f"{name}: that time is out of range", field=name) from None
