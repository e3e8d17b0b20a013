"""Claude Code's session file: the conversation as Claude Code records its own (one JSON record
per line, each chained to the one before by `parentUuid`), so `claude --resume <id>` opens it
and sends its history to the model.

What a user said is a `user` record; what the agent produced is an `assistant` record (text
and `tool_use` blocks), and a tool's result a `user` record holding a `tool_result` block. A
notice is a monitor event, never something the user said: it is written as Claude Code writes
a message queued while it works (a queue-operation enqueue, a `queued_command` attachment, a
queue-operation remove). Claude Code looks for sessions in
`~/.claude/projects/<the working directory, every other character a dash>/<id>.jsonl`;
`project_folder()` names it.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from caucus.runtime.session.files import new_file

FORMAT_VERSION = "2.1.332"  # the Claude Code release whose session records these follow


def project_folder(cwd: str, home: Path | None = None) -> Path:
    """Where Claude Code keeps the sessions of a working directory."""
    base = home if home is not None else Path.home()
    return base / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ClaudeSessionHarness:
    def __init__(self, folder: Path, *, model: str, cwd: str | None = None) -> None:
        self.session_id, path, self._file = new_file(folder, "{}.jsonl")
        self.path = str(path)
        self._model = model
        self._cwd = cwd or os.getcwd()
        self._parent: str | None = None
        self._messages = 0

    def _base(self) -> dict[str, Any]:
        return {
            "isSidechain": False,
            "userType": "external",
            "cwd": self._cwd,
            "sessionId": self.session_id,
            "version": FORMAT_VERSION,
        }

    def _chained(self, kind: str, body: dict[str, Any]) -> None:
        record_id = str(uuid.uuid4())
        self._emit(
            {
                "parentUuid": self._parent,
                **self._base(),
                "type": kind,
                **body,
                "uuid": record_id,
                "timestamp": _now(),
            }
        )
        self._parent = record_id

    def _queue(self, operation: str, content: str | None = None) -> None:
        record: dict[str, Any] = {
            "type": "queue-operation",
            "operation": operation,
            "timestamp": _now(),
            "sessionId": self.session_id,
        }
        if content is not None:
            record["content"] = content
        self._emit(record)

    def _emit(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()

    def write(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "InputReceived":
            self._chained("user", {"message": {"role": "user", "content": event["text"]}})
        elif kind == "NoticeReceived":
            prompt = f"[notice from {event['source']}]\n{event['text']}"
            self._queue("enqueue", prompt)
            attachment = {"type": "queued_command", "prompt": prompt, "commandMode": "prompt"}
            self._chained("attachment", {"attachment": attachment})
            self._queue("remove")
        elif kind == "NewThreadMessage":
            message = event["message"]
            if message["role"] == "assistant":
                self._assistant(message)
            elif message["role"] == "tool":
                block = {
                    "type": "tool_result",
                    "tool_use_id": message.get("tool_call_id"),
                    "content": message["content"],
                }
                self._chained("user", {"message": {"role": "user", "content": [block]}})

    def _assistant(self, message: dict[str, Any]) -> None:
        blocks: list[dict[str, Any]] = []
        if message["content"]:
            blocks.append({"type": "text", "text": message["content"]})
        for call in message.get("tool_calls", []):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["name"],
                    "input": call["arguments"],
                }
            )
        if not blocks:
            blocks.append({"type": "text", "text": ""})
        self._messages += 1
        uses = any(b["type"] == "tool_use" for b in blocks)
        self._chained(
            "assistant",
            {
                "message": {
                    "id": f"msg_caucus_{self._messages:06d}",
                    "type": "message",
                    "role": "assistant",
                    "model": self._model,
                    "content": blocks,
                    "stop_reason": "tool_use" if uses else "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                }
            },
        )

    def close(self) -> None:
        self._file.close()
