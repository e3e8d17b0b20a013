"""Channels: named rooms with durable membership and a topic; a private one is joined on the
operator's invitation and seen by its members alone (issue 47, ADR 0033)."""

from __future__ import annotations

from dataclasses import dataclass, field

from caucus.errors import ChannelPrivate, ChannelPublic, Hint, InvalidRequest

MAX_TOPIC = 280
# An agent's approvals channel (`runtime/connectors/hub.py`): whole tool calls and the
# operator's answers to them, private from creation whoever creates it.
APPROVALS = "#approve-"


@dataclass(slots=True)
class Channel:
    name: str
    topic: str
    created_at: float
    members: list[str] = field(default_factory=list)
    topic_by: str | None = None
    topic_at: float | None = None
    closed_at: float | None = None
    private: bool = False


def check_topic(topic: str) -> str:
    if len(topic) > MAX_TOPIC:
        raise InvalidRequest(f"topic is at most {MAX_TOPIC} characters", field="topic")
    if "\n" in topic or "\r" in topic:
        raise InvalidRequest("topic is one line: remove the line breaks", field="topic")
    return topic


def born_private(name: str, asked: bool) -> bool:
    """Whether a channel created now is private: asked so, or an approvals channel."""
    return asked or name.startswith(APPROVALS)


def check_join(name: str, *, private: bool, member: bool, invited: bool, asked: bool) -> None:
    """An agent may join an existing channel unless it is private and the operator has not
    invited it; asking for a private channel where a public one exists is refused rather
    than answered with a channel others can read."""
    if member:
        return
    if private and not invited:
        raise ChannelPrivate(
            f"{name} is private: joining it takes the operator's invitation",
            channel=name,
        )
    if asked and not private:
        raise ChannelPublic(
            f"{name} already exists and is public: choose another name for a private channel, "
            "or ask the operator to make this one private",
            channel=name,
        )


def check_post(name: str, *, private: bool, member: bool) -> None:
    """Sending to a private channel takes being in it (a send to a public one joins it)."""
    if private and not member:
        raise ChannelPrivate(
            f"{name} is private: only its members post in it",
            hint=Hint.LIST_CHANNELS,
            channel=name,
        )
