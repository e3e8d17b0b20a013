"""What an analyst runs on: anything that completes a prompt.

`Completer` is the whole interface (`complete(prompt) -> str`, sync or async); a plain function
is one too (`as_completer`). Two ship: an OpenAI-compatible server through the runtime's own
backend (with read-only MCP tools when the evidence layer is on), and the Claude Code CLI
(`claude -p`), which runs the MCP evidence layer with its own tool loop.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import shutil
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from caucus.models.chat import ChatMessage, user
from caucus.models.seam import BackendError
from caucus.models.tools import NoTools, ToolExecutor

STDERR_TAIL = 800


@runtime_checkable
class Completer(Protocol):
    """A model that answers one prompt with text."""

    def complete(self, prompt: str) -> str | Awaitable[str]: ...


class CallableBackend:
    """A function as a backend (sync functions run in a thread, so a panel still answers in
    parallel)."""

    tools = False

    def __init__(self, function: Callable[..., str | Awaitable[str]]) -> None:
        self._function = function
        try:
            self._takes_schema = "schema" in inspect.signature(function).parameters
        except (TypeError, ValueError):  # a builtin or a C function: the prompt alone
            self._takes_schema = False

    async def complete(self, prompt: str, schema: Mapping[str, Any] | None = None) -> str:
        """The answer to `prompt`; `schema` (the JSON schema a usable answer meets) reaches a
        backend that can use it (`OpenAICompleter` with `json_schema`), the others ignore it."""
        extra = {"schema": schema} if self._takes_schema and schema is not None else {}
        if inspect.iscoroutinefunction(self._function):
            result = await self._function(prompt, **extra)
        else:
            result = await asyncio.to_thread(self._function, prompt, **extra)
            if inspect.isawaitable(result):
                result = await result
        if not isinstance(result, str):
            raise BackendError(f"the backend returned {type(result).__name__}, not text")
        return result


def as_completer(backend: Completer | Callable[[str], str | Awaitable[str]]) -> CallableBackend:
    """Any backend a caller may hand over, as one with an async `complete`."""
    if isinstance(backend, Completer):
        wrapped = CallableBackend(backend.complete)
        wrapped.tools = bool(getattr(backend, "tools", False))
        return wrapped
    if callable(backend):
        return CallableBackend(backend)
    raise TypeError("a deliberation backend is a function of a prompt or has complete(prompt)")


class _Discard:
    async def put(self, message: ChatMessage) -> None:
        return None


class OpenAICompleter:
    """An OpenAI-compatible server; with `executor`, the model may call its (read-only) tools
    in the runtime's bounded tool loop before answering."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None,
        executor: ToolExecutor | None = None,
        timeout: float = 600.0,
        json_mode: bool = False,
        json_schema: bool = False,
    ) -> None:
        # `openai` costs a hub a quarter second to import: only a chair that calls a model pays.
        from caucus.models.openai_compat import OpenAIBackend

        self._backend = OpenAIBackend(
            model=model, base_url=base_url, api_key=api_key, timeout=timeout, json_mode=json_mode
        )
        self._json_schema = json_mode and json_schema
        self._tools: ToolExecutor = executor or NoTools()
        self.tools = executor is not None

    async def check(self) -> None:
        await self._backend.check()

    async def complete(self, prompt: str, schema: Mapping[str, Any] | None = None) -> str:
        shape = schema if self._json_schema else None
        async with self._tools.run_scope():
            outcome = await self._backend.run(
                [user(prompt)], _Discard(), self._tools, answer_schema=shape
            )
        return outcome.reply

    async def close(self) -> None:
        await self._backend.close()


class ClaudeCliCompleter:
    """`claude -p`: the prompt on stdin, the answer on stdout. With an MCP config, Claude Code
    starts those servers and may call only `allowed_tools` (its own built-in tools stay off);
    the prompts then carry the guard that says the tools are read-only evidence."""

    def __init__(
        self,
        *,
        command: str = "claude",
        model: str | None = None,
        mcp_config: Path | None = None,
        allowed_tools: Sequence[str] = (),
        timeout: float = 600.0,
        cwd: str | None = None,
    ) -> None:
        self._command = command
        self._model = model
        self._mcp_config = mcp_config
        self._allowed = list(allowed_tools)
        self._timeout = timeout
        self._cwd = cwd
        self.tools = mcp_config is not None

    def argv(self) -> list[str]:
        found = shutil.which(self._command)
        if found is None:
            raise BackendError(
                f"{self._command!r} was not found: install Claude Code "
                "(npm install -g @anthropic-ai/claude-code) or set backend.command"
            )
        argv = [found, "-p", "--output-format", "json", "--tools", ""]
        if self._model:
            argv += ["--model", self._model]
        if self._mcp_config is not None:
            argv += ["--mcp-config", str(self._mcp_config), "--strict-mcp-config"]
            if self._allowed:
                argv += ["--allowedTools", ",".join(self._allowed)]
        return argv

    async def complete(self, prompt: str) -> str:
        argv = self.argv()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self._cwd,
                env={**os.environ},
            )
        except OSError as exc:
            raise BackendError(f"cannot start {self._command!r}: {exc}") from None
        try:
            out, err = await asyncio.wait_for(
                proc.communicate(prompt.encode("utf-8")), self._timeout
            )
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise BackendError(f"claude did not answer within {self._timeout:g} s") from None
        tail = err.decode("utf-8", "replace").strip()[-STDERR_TAIL:]
        if proc.returncode != 0:
            raise BackendError(
                f"claude exited with {proc.returncode}" + (f": {tail}" if tail else "")
            )
        text = out.decode("utf-8", "replace")
        try:
            result = json.loads(text)
        except ValueError:
            return text
        if isinstance(result, dict):
            if result.get("is_error"):
                raise BackendError(f"claude reported an error: {result.get('result')}")
            if isinstance(result.get("result"), str):
                return str(result["result"])
        return text
