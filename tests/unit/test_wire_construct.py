"""`Wire.model_construct`'s fast path builds exactly what pydantic's own would."""

from __future__ import annotations

from pydantic import BaseModel, Field

from caucus.wire.fields import Wire
from caucus.wire.work import TaskEventInfo


class Sample(Wire):
    name: str
    count: int = 3
    tags: list[str] = Field(default_factory=list)


def test_every_field_given_builds_what_pydantic_builds() -> None:
    fast = Sample.model_construct(name="a", count=1, tags=["x"])
    slow = BaseModel.model_construct.__func__(Sample, name="a", count=1, tags=["x"])  # type: ignore[attr-defined]
    assert fast == slow
    assert fast.model_fields_set == slow.model_fields_set == {"name", "count", "tags"}
    assert fast.model_dump_json() == slow.model_dump_json()
    assert fast.__pydantic_extra__ is None
    assert fast.__pydantic_private__ is None


def test_missing_fields_take_their_defaults_as_pydantic_gives_them() -> None:
    partial = Sample.model_construct(name="a")
    assert (partial.count, partial.tags, partial.model_fields_set) == (3, [], {"name"})
    told = Sample.model_construct({"name"}, name="a", count=5)
    assert told.model_fields_set == {"name"}


def test_a_hub_wire_model_round_trips() -> None:
    event = TaskEventInfo.model_construct(ts=1.0, state="pending", actor="a", detail=None)
    assert TaskEventInfo.model_validate_json(event.model_dump_json()) == event
