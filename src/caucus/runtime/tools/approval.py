"""Operator approval bound to the exact action.

Which calls wait follows MCP: a tool may change things unless its server marks it
`readOnlyHint: true`, so every other tool of the agent's MCP servers runs only after the
operator approves that very call (`--allow TOOL` lets one run unasked, `--approve TOOL` gates
one anyway, `--approve-all` gates even the read-only ones). The room's own tools and the
runtime's resource tools are the operator's to oversee in the room itself, and run unasked
unless named with `--approve`.

The agent asks with a one-time form that carries the whole call (`domain/approvals.py`): the
tool, every argument, the files the arguments name with what each holds (`binding.py`), and the
tool's annotations. The approve option embeds the SHA-256 digest of the call's canonical text,
which the hub checks, so what the operator reads is what they approve. Only an answer the hub
itself gives — a `form_answer` from the operator, for that form, asked by this agent, to its own
approvals channel, choosing exactly that option — approves. A cancel, a timeout, any other
option, or a bound file created, changed or deleted while the form waited denies; a peer's
message saying "approve" is only a message. The hub records every answer on the decision ledger.

Without a hub there is nobody to ask: gated calls are refused, unless the agent was started
`--unattended`, which runs them unasked (and says so at start).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from caucus.domain.approvals import ToolCallSubject, approve_option
from caucus.models.tools import ROOM, RUNTIME, ToolExecutor, ToolResult, ToolSpec
from caucus.runtime.tools.binding import bind, changes

log = logging.getLogger(__name__)

__all__ = ["DENY", "FIELD", "ApprovalTools", "Policy", "Verdict", "approve_option"]

FIELD = "decision"
DENY = "deny"


@dataclass(frozen=True, slots=True)
class Verdict:
    approved: bool
    why: str


@dataclass(frozen=True, slots=True)
class Policy:
    """Which tools wait for the operator."""

    approve: frozenset[str] = frozenset()  # gated whatever their annotations say
    allow: frozenset[str] = frozenset()  # run unasked whatever their annotations say
    approve_all: bool = False  # gate the read-only tools of the MCP servers too

    def gated(self, spec: ToolSpec) -> bool:
        if spec.name in self.allow:
            return False
        if spec.name in self.approve:
            return True
        if spec.source in (ROOM, RUNTIME):
            return False
        return self.approve_all or not spec.read_only


class Approver(Protocol):
    async def approve(self, subject: ToolCallSubject) -> Verdict:
        """Ask the operator about this exact call; the verdict, once it is in."""
        ...

    async def report(self, subject: ToolCallSubject, changed: list[str]) -> None:
        """Tell the operator what an approved call's bound files hold after it ran."""
        ...


class NobodyToAsk:
    """An agent without a hub: a gated call is refused, saying how to let it run."""

    async def approve(self, subject: ToolCallSubject) -> Verdict:
        return Verdict(
            False,
            f"{subject.tool} needs the operator's approval and this agent has no hub to ask: "
            f"start it with --hub URL, let the tool run with --allow {subject.tool}, or run "
            "it --unattended",
        )

    async def report(self, subject: ToolCallSubject, changed: list[str]) -> None:
        return None


class Unattended:
    """`--unattended`: the user chose to run gated calls without asking anyone."""

    async def approve(self, subject: ToolCallSubject) -> Verdict:
        log.info("running %s unasked (--unattended)", subject.tool)
        return Verdict(True, "unattended")

    async def report(self, subject: ToolCallSubject, changed: list[str]) -> None:
        log.info("%s changed: %s", subject.tool, "; ".join(changed))


class ApprovalTools:
    """Tools whose gated calls wait for the operator's approval of that exact call."""

    def __init__(
        self,
        inner: ToolExecutor,
        approver: Approver,
        *,
        policy: Policy | None = None,
        cwd: Path | None = None,
    ) -> None:
        self._inner = inner
        self._approver = approver
        self._policy = policy or Policy()
        self._cwd = cwd or Path.cwd()
        self._specs: dict[str, ToolSpec] = {}

    async def list_tools(self) -> list[ToolSpec]:
        tools = await self._inner.list_tools()
        self._specs = {t.name: t for t in tools}
        return tools

    def guarded(self, name: str) -> bool:
        spec = self._specs.get(name)
        if spec is None:  # not listed (yet): gated unless the user allowed it by name
            return name not in self._policy.allow
        return self._policy.gated(spec)

    async def split(self) -> tuple[list[str], list[str]]:
        """(the tools that run unasked, the tools that wait), as listed now."""
        tools = await self.list_tools()
        unasked = [t.name for t in tools if not self._policy.gated(t)]
        return unasked, [t.name for t in tools if self._policy.gated(t)]

    async def call(self, name: str, arguments: dict[str, object]) -> ToolResult:
        if not self.guarded(name):
            return await self._inner.call(name, arguments)
        spec = self._specs.get(name)
        files = await asyncio.to_thread(bind, arguments, self._cwd)
        subject = ToolCallSubject(
            name, arguments, files, dict(spec.annotations) if spec is not None else {}
        )
        try:
            verdict = await self._approver.approve(subject)
        except Exception as exc:  # the form could not be put: nothing runs
            verdict = Verdict(False, f"the approval could not be asked: {exc}")
        if verdict.approved and files:
            # Every bound path must still hold what the operator approved a call on; the
            # call goes out at once after this check, with nothing awaited in between.
            changed = changes(files, await asyncio.to_thread(bind, arguments, self._cwd))
            if changed:
                verdict = Verdict(
                    False, "a file changed while the approval was pending: " + "; ".join(changed)
                )
        if not verdict.approved:
            log.warning("%s was not run: %s", name, verdict.why)
            return ToolResult(
                f"the operator did not approve this call ({verdict.why}); it was not run",
                is_error=True,
            )
        result = await self._inner.call(name, arguments)
        after = changes(files, await asyncio.to_thread(bind, arguments, self._cwd))
        if after:
            # What the call (or anyone, meanwhile) did to the bound files, for the operator.
            with contextlib.suppress(Exception):
                await self._approver.report(subject, after)
        return result

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
