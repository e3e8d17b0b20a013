"""Channels: named rooms with durable membership and a topic."""

from __future__ import annotations

from dataclasses import dataclass, field

from caucus.errors import InvalidRequest

MAX_TOPIC = 280


@dataclass(slots=True)
class Channel:
    name: str
    topic: str
    created_at: float
    members: list[str] = field(default_factory=list)
    topic_by: str | None = None
    topic_at: float | None = None
    closed_at: float | None = None


def check_topic(topic: str) -> str:
    if len(topic) > MAX_TOPIC:
        raise InvalidRequest(f"topic is at most {MAX_TOPIC} characters", field="topic")
    if "\n" in topic or "\r" in topic:
        raise InvalidRequest("topic is one line: remove the line breaks", field="topic")
    return topic
