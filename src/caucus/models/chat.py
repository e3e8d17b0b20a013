"""The conversation a thread holds: chat messages in the shape OpenAI-compatible servers take
(roles system, user, assistant, tool), with the tool calls an assistant message makes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model asked for: `arguments` as the model wrote them, decoded."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments)},
        }


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None  # a tool result: the call it answers
    name: str | None = None  # a tool result: the tool's name
    source: str | None = None  # a user message that came as a notice: where from

    def wire(self) -> dict[str, Any]:
        """As `/v1/chat/completions` takes it. An assistant message that carried tool calls is
        sent with empty content, never without it (llama.cpp answers 500 to a missing one)."""
        out: dict[str, Any] = {"role": self.role.value, "content": self.content}
        if self.tool_calls:
            out["content"] = ""
            out["tool_calls"] = [c.wire() for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.role is Role.TOOL and self.name is not None:
            out["name"] = self.name
        return out

    def record(self) -> dict[str, Any]:
        """As the NDJSON events carry it."""
        out: dict[str, Any] = {"role": self.role.value, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        if self.source is not None:
            out["source"] = self.source
        return out


def user(content: str, source: str | None = None) -> ChatMessage:
    return ChatMessage(Role.USER, content, source=source)


def assistant(content: str, tool_calls: tuple[ToolCall, ...] = ()) -> ChatMessage:
    return ChatMessage(Role.ASSISTANT, content, tool_calls)


def tool_result(call: ToolCall, content: str) -> ChatMessage:
    return ChatMessage(Role.TOOL, content, tool_call_id=call.id, name=call.name)
