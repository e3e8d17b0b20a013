"""Field helpers for the wire models."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class Wire(BaseModel):
    """Base of every wire model. Unknown fields from a newer hub are ignored, not refused;
    models are built from domain values with `model_construct` (no re-validation of what the
    hub itself made) and parsed with validation when they arrive over the wire."""

    model_config = ConfigDict(extra="ignore")


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
