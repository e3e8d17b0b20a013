"""Agent cards: the room's (its agents as skills) and each agent's own (its declared skills).

Every card names the JSON-RPC endpoint in A2A 1.0 and, on the same URL, 0.3 (the SDK's
compatibility layer answers `message/send` there), and the bearer scheme: a caller sends the
token it holds in the room."""

from __future__ import annotations

from typing import Any

from a2a.types import a2a_pb2 as pb
from a2a.utils.constants import PROTOCOL_VERSION_0_3, PROTOCOL_VERSION_1_0, TransportProtocol

from caucus import __version__
from caucus.domain.peers import PeerView

SCHEME = "caucus-bearer"
ROOM_PATH = "/a2a"


def agent_path(name: str) -> str:
    return f"{ROOM_PATH}/{name}"


def _interfaces(url: str) -> list[pb.AgentInterface]:
    return [
        pb.AgentInterface(
            url=url, protocol_binding=TransportProtocol.JSONRPC.value, protocol_version=version
        )
        for version in (PROTOCOL_VERSION_1_0, PROTOCOL_VERSION_0_3)
    ]


def _card(name: str, description: str, url: str, skills: list[pb.AgentSkill]) -> pb.AgentCard:
    card = pb.AgentCard(
        name=name,
        description=description,
        version=__version__,
        supported_interfaces=_interfaces(url),
        provider=pb.AgentProvider(organization="Caucus", url=url.rsplit("/a2a", 1)[0]),
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain"],
        skills=skills,
    )
    card.security_schemes[SCHEME].http_auth_security_scheme.CopyFrom(
        pb.HTTPAuthSecurityScheme(
            scheme="bearer",
            description="the token this hub gave you when you joined the room (POST /register)",
        )
    )
    card.security_requirements.add().schemes[SCHEME].CopyFrom(pb.StringList())
    return card


def _declared(skill: dict[str, Any], fallback: str) -> pb.AgentSkill:
    tags = skill.get("tags")
    return pb.AgentSkill(
        id=str(skill.get("id") or fallback),
        name=str(skill.get("name") or skill.get("id") or fallback),
        description=str(skill.get("description") or skill.get("name") or fallback),
        tags=[str(t) for t in tags] if isinstance(tags, list) and tags else ["caucus"],
    )


def _what(view: PeerView) -> str:
    return view.description or view.status or f"{view.name}, an agent in a Caucus room"


def agent_card(view: PeerView, base: str) -> pb.AgentCard:
    """One agent's card: what it declared of itself; a message to it is a task to it."""
    skills = [_declared(s, f"{view.name}-{i}") for i, s in enumerate(view.skills)]
    if not skills:
        skills = [
            pb.AgentSkill(
                id="task",
                name="Take a task",
                description=f"Hand {view.name} a task in words; its reply is the result",
                tags=["caucus", "task"],
            )
        ]
    return _card(view.name, _what(view), base + agent_path(view.name), skills)


def room_card(views: list[PeerView], base: str, front: str | None = None) -> pb.AgentCard:
    """The room's card: each agent here is a skill, with its own card one path away. A message
    to the room's endpoint goes to its front agent (the configured one, else the only agent
    here), or to the agent `metadata.to` names."""
    skills = [
        pb.AgentSkill(
            id=view.name,
            name=view.name,
            description=f"{_what(view)} (its own card: "
            f"{base}{agent_path(view.name)}/.well-known/agent-card.json)",
            tags=sorted(
                {"caucus-agent"} | {str(t) for s in view.skills for t in (s.get("tags") or []) if t}
            ),
        )
        for view in views
    ]
    taken = (
        f"A message sent here is a task to {front}"
        if front
        else "A message sent here is a task to the one agent here besides you, if there is one"
    )
    description = (
        "A Caucus room: a supervised hub where agents hand each other tasks. Each skill is an "
        f"agent here. {taken}; one sent to /a2a/<agent> (or here, naming it in metadata.to) "
        "is a task to that agent."
    )
    return _card("Caucus room", description, base + ROOM_PATH, skills)
