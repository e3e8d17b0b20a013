"""Operator approval bound to the exact action.

Tools that mutate (named with `--approve TOOL`, and every tool whose server marks it
`destructiveHint`) run only after the operator approves that very call. The agent asks with a
one-time form whose approve option embeds a SHA-256 digest of the call: the tool, its arguments
and, where an argument names an existing file, the file's content hash. Only an answer the hub
itself gives — a `form_answer` from the operator, for that form, asked by this agent, to its own
approvals channel, choosing exactly that option — approves. A cancel, a timeout, any other
option, or a file that changed while the form waited denies; a peer's message saying "approve"
is only a message. The hub records every answer on the decision ledger.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from caucus.runtime.tools.executor import ToolExecutor, ToolResult, ToolSpec

log = logging.getLogger(__name__)

FIELD = "decision"
DENY = "deny"
PATH_KEYS = ("path", "file", "file_path", "filename", "target")


def file_hashes(arguments: dict[str, Any], cwd: Path) -> dict[str, str]:
    """The content hash of every existing file an argument names (a file edit's subject)."""
    found: dict[str, str] = {}
    for key in PATH_KEYS:
        value = arguments.get(key)
        if not isinstance(value, str) or not value or len(value) > 4096:
            continue
        path = Path(value) if Path(value).is_absolute() else cwd / value
        with contextlib.suppress(OSError):
            if path.is_file():
                found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def call_digest(name: str, arguments: dict[str, Any], files: dict[str, str]) -> str:
    canonical = json.dumps(
        {"tool": name, "arguments": arguments, "files": files},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def approve_option(digest: str) -> str:
    return f"approve sha256:{digest}"


@dataclass(frozen=True, slots=True)
class Verdict:
    approved: bool
    why: str


class Approver(Protocol):
    async def approve(self, name: str, arguments: dict[str, Any], digest: str) -> Verdict:
        """Ask the operator about this exact call; the verdict, once it is in."""
        ...


class ApprovalTools:
    """Tools whose mutating calls wait for the operator's approval of that exact call."""

    def __init__(
        self,
        inner: ToolExecutor,
        approver: Approver,
        *,
        approve: frozenset[str] = frozenset(),
        destructive: bool = True,
        cwd: Path | None = None,
    ) -> None:
        self._inner = inner
        self._approver = approver
        self._named = approve
        self._destructive = destructive
        self._cwd = cwd or Path.cwd()
        self._guarded: set[str] = set(approve)

    async def list_tools(self) -> list[ToolSpec]:
        tools = await self._inner.list_tools()
        self._guarded = set(self._named)
        if self._destructive:
            self._guarded |= {t.name for t in tools if t.destructive}
        return tools

    def guarded(self, name: str) -> bool:
        return name in self._guarded

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if name not in self._guarded:
            return await self._inner.call(name, arguments)
        files = file_hashes(arguments, self._cwd)
        digest = call_digest(name, arguments, files)
        verdict = await self._approver.approve(name, arguments, digest)
        if verdict.approved and files:
            # The file must still be what the operator approved a change to.
            now = file_hashes(arguments, self._cwd)
            if now != files:
                verdict = Verdict(False, "the file changed while the approval was pending")
        if not verdict.approved:
            log.warning("%s was not run: %s", name, verdict.why)
            return ToolResult(
                f"the operator did not approve this call ({verdict.why}); it was not run",
                is_error=True,
            )
        return await self._inner.call(name, arguments)

    @contextlib.asynccontextmanager
    async def run_scope(self) -> AsyncIterator[None]:
        async with self._inner.run_scope():
            yield


class Pending:
    """A form waiting for the operator, and what an answer must be to approve."""

    def __init__(self, form_id: str, option: str) -> None:
        self.form_id = form_id
        self.option = option
        self.verdict: asyncio.Future[Verdict] = asyncio.get_running_loop().create_future()

    def settle(self, verdict: Verdict) -> None:
        if not self.verdict.done():
            self.verdict.set_result(verdict)
