"""A backend on the Claude Code CLI (`claude -p … --output-format stream-json`), for people who
have Claude Code and no API key.

Claude Code keeps its own sessions, so a thread is one Claude Code session: the first run starts
it (`--session-id`), and a run whose history continues what an earlier run ended with resumes
it (`--resume`), sending only what was added since; anything else starts a new session with the
whole conversation written out. The agent's system prompt replaces Claude Code's
(`--system-prompt`), its built-in tools are off (`--tools ""`), and its tools are the agent's
MCP servers, which Claude Code starts and calls itself (`--mcp-config` with
`--strict-mcp-config`, each server's tools allowed). What the stream says becomes the run's
messages: text and tool calls as assistant messages, tool results as tool messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import shlex
import shutil
import tempfile
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from caucus.models.chat import ChatMessage, Role, ToolCall, assistant, tool_result
from caucus.models.seam import BackendError, MessageSink, RunOutcome
from caucus.models.tools import ToolExecutor, ToolObserver, ToolResult

log = logging.getLogger(__name__)

SESSIONS_KEPT = 64
STDERR_TAIL = 2000


def _digest(messages: Sequence[ChatMessage]) -> str:
    h = hashlib.sha256()
    for m in messages:
        h.update(json.dumps(m.record(), sort_keys=True).encode())
        h.update(b"\n")
    return h.hexdigest()


def render(messages: Sequence[ChatMessage]) -> str:
    """A conversation as one prompt, for a session that starts with history behind it."""
    if len(messages) == 1 and messages[0].role is Role.USER:
        return messages[0].content
    lines = ["The conversation so far:", ""]
    for m in messages[:-1]:
        if m.role is Role.TOOL:
            lines.append(f"[tool {m.name} answered]\n{m.content}")
        elif m.tool_calls:
            calls = ", ".join(f"{c.name}({json.dumps(c.arguments)})" for c in m.tool_calls)
            lines.append(f"[assistant called {calls}]")
        else:
            lines.append(f"[{m.role.value}]\n{m.content}")
        lines.append("")
    lines += ["Now reply to this:", messages[-1].content]
    return "\n".join(lines)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


class ClaudeCliBackend:
    def __init__(
        self,
        *,
        command: str = "claude",
        model: str | None = None,
        mcp_servers: Sequence[str] = (),
        cwd: str | None = None,
    ) -> None:
        self._command = command
        self._model = model
        self._servers = list(mcp_servers)
        self._cwd = cwd
        self._sessions: OrderedDict[str, tuple[str, int]] = OrderedDict()  # digest -> id, length
        self._config_dir: str | None = None  # only when there are servers to configure
        self._config = self._write_config()

    def _write_config(self) -> Path | None:
        if not self._servers:
            return None
        servers: dict[str, Any] = {}
        for n, command in enumerate(self._servers, 1):
            argv = shlex.split(command)
            servers[f"s{n}"] = {"command": argv[0], "args": argv[1:]}
        self._config_dir = tempfile.mkdtemp(prefix="caucus-claude-")
        path = Path(self._config_dir) / "mcp.json"
        path.write_text(json.dumps({"mcpServers": servers}), "utf-8")
        return path

    async def check(self) -> None:
        """Raise BackendError, saying what to do, when Claude Code is not there."""
        found = shutil.which(self._command)
        if found is None:
            raise BackendError(
                f"{self._command!r} was not found: install Claude Code "
                "(npm install -g @anthropic-ai/claude-code) or give --claude PATH"
            )
        proc = await asyncio.create_subprocess_exec(
            found, "--version", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, err = await proc.communicate()
        if proc.returncode != 0:
            raise BackendError(f"`{self._command} --version` failed: {err.decode()[-300:]}")
        log.info("Claude Code %s", out.decode().strip())

    async def close(self) -> None:
        if self._config_dir is not None:
            shutil.rmtree(self._config_dir, ignore_errors=True)

    def _continued(self, history: Sequence[ChatMessage]) -> tuple[str, int] | None:
        for digest, (session, length) in reversed(self._sessions.items()):
            if length < len(history) and _digest(history[:length]) == digest:
                return session, length
        return None

    async def run(
        self,
        history: Sequence[ChatMessage],
        sink: MessageSink,
        tools: ToolExecutor,
        observer: ToolObserver | None = None,
    ) -> RunOutcome:
        system = history[0].content if history and history[0].role is Role.SYSTEM else ""
        found = self._continued(history)
        argv = [self._command, "-p"]
        if found is not None:
            session, length = found
            # What came since the session's last run: the user's messages (input, notices).
            argv += ["\n\n".join(m.content for m in history[length:]), "--resume", session]
        else:
            session = str(uuid.uuid4())
            rest = [m for m in history if m.role is not Role.SYSTEM]
            argv += [render(rest) if rest else "", "--session-id", session]
        argv += ["--output-format", "stream-json", "--verbose", "--tools", ""]
        argv += ["--system-prompt", system]
        if self._model:
            argv += ["--model", self._model]
        if self._config is not None:
            allowed = [f"mcp__s{n}" for n in range(1, len(self._servers) + 1)]
            argv += ["--mcp-config", str(self._config), "--strict-mcp-config"]
            argv += ["--allowedTools", ",".join(allowed)]
        produced = await self._stream(argv, sink, observer)
        self._remember([*history, *produced[0]], session)
        return RunOutcome(produced[1])

    def _remember(self, messages: Sequence[ChatMessage], session: str) -> None:
        self._sessions[_digest(messages)] = (session, len(messages))
        while len(self._sessions) > SESSIONS_KEPT:
            self._sessions.popitem(last=False)

    async def _stream(
        self, argv: list[str], sink: MessageSink, observer: ToolObserver | None
    ) -> tuple[list[ChatMessage], str]:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=self._cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=16 * 1024 * 1024,
                env={**os.environ},
            )
        except OSError as exc:
            raise BackendError(f"cannot start {self._command!r}: {exc}") from None
        assert proc.stdout is not None
        assert proc.stderr is not None
        errors = asyncio.ensure_future(proc.stderr.read())
        heard = _Transcript(sink, observer)
        try:
            while line := await proc.stdout.readline():
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                await heard.read(event)
            await heard.flush()
            code = await proc.wait()
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise
        finally:
            stderr = (await errors).decode("utf-8", "replace")
        produced, result = heard.produced, heard.result
        if result is None or code != 0 or result.get("is_error"):
            said = (result or {}).get("result") or stderr[-STDERR_TAIL:].strip()
            raise BackendError(f"Claude Code failed (exit {code}): {said or 'no output'}")
        reply = str(result.get("result", ""))
        if not produced or produced[-1].role is not Role.ASSISTANT or produced[-1].tool_calls:
            final = assistant(reply)
            produced.append(final)
            await sink.put(final)
        return produced, reply


class _Transcript:
    """What Claude Code's stream-json output says, as the chat messages of the run: its
    assistant turns (text and tool calls, one message per message id) and the tool results,
    each put on the sink as it completes."""

    def __init__(self, sink: MessageSink, observer: ToolObserver | None) -> None:
        self.sink = sink
        self.observer = observer
        self.produced: list[ChatMessage] = []
        self.result: dict[str, Any] | None = None
        self._calls: dict[str, ToolCall] = {}
        self._pending: tuple[str, list[str], list[ToolCall]] | None = None  # id, texts, calls

    async def read(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "assistant":
            await self._assistant(event.get("message", {}))
        elif kind == "user":
            await self.flush()
            for block in event.get("message", {}).get("content", []):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    await self._answered(block)
        elif kind == "result":
            await self.flush()
            self.result = event

    async def _assistant(self, message: dict[str, Any]) -> None:
        if self._pending is not None and self._pending[0] != message.get("id"):
            await self.flush()
        if self._pending is None:
            self._pending = (str(message.get("id")), [], [])
        for block in message.get("content", []):
            if block.get("type") == "text":
                self._pending[1].append(block.get("text", ""))
            elif block.get("type") == "tool_use":
                call = ToolCall(block["id"], block["name"], block.get("input") or {})
                self._calls[call.id] = call
                self._pending[2].append(call)
                if self.observer is not None:
                    self.observer.called(call)

    async def _answered(self, block: dict[str, Any]) -> None:
        used = str(block.get("tool_use_id"))
        call = self._calls.get(used) or ToolCall(used, "unknown")
        text = _text(block.get("content"))
        if block.get("is_error"):
            text = f"Error: {text}"
        if self.observer is not None:
            self.observer.answered(call, ToolResult(text, bool(block.get("is_error"))))
        await self._put(tool_result(call, text))

    async def flush(self) -> None:
        if self._pending is not None:
            texts, calls = self._pending[1], self._pending[2]
            self._pending = None
            await self._put(assistant("".join(texts), tuple(calls)))

    async def _put(self, message: ChatMessage) -> None:
        self.produced.append(message)
        await self.sink.put(message)
