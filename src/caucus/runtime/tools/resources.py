"""MCP resources for the model, and watches that wake the agent when one changes.

`ResourceTools` puts five builtins in front of the servers' own tools: `list_resources`,
`read_resource`, `watch_resource`, `unwatch_resource` and `list_watches`. A watch subscribes to
a resource on the server that has it; each update the server reports goes through the
`WatchManager`: updates that arrive within the watch's debounce window are one (the last wins),
and with `changes_only` an update whose content hashes the same as the last one seen is dropped
(dedupe). What is left becomes a notice (`resource:<uri>`), which runs a turn like input. With
`--watch-state FILE` the watches are kept in a 0600 JSON file and restored, and re-subscribed,
on the next start; the restore is told in the On Start turn.

A Caucus inbox a server offers (`caucus://inbox/…`: `caucus bridge` once joined) is followed
without being asked, whenever the servers' resource lists change: the agent is woken by the
notice alone, and calls `listen` to take the messages. Those watches are the server's, not the
model's: never saved, and dropped when the server stops listing them (a leave).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from caucus.files import private_dir, replace_atomically
from caucus.models.mcp_tools import McpTools
from caucus.models.tools import RUNTIME, ToolResult, ToolSpec
from caucus.runtime.orchestrator import Notice

log = logging.getLogger(__name__)

DEBOUNCE = 2.0  # seconds: updates closer together than this are one
INBOX = "caucus://inbox/"
INBOX_DEBOUNCE = 0.3  # a burst of messages is one wake-up, without making anyone wait
WATCHES_MAX = 100
PREVIEW = 2000  # characters of a changed resource put in its notice

_URI = {"uri": {"type": "string", "description": "the resource's URI"}}
BUILTINS = [
    ToolSpec(
        "list_resources",
        "The resources the MCP servers offer (uri, name, type, server).",
        {"type": "object", "properties": {}},
        read_only=True,
        source=RUNTIME,
    ),
    ToolSpec(
        "read_resource",
        "Read a resource by URI.",
        {"type": "object", "properties": _URI, "required": ["uri"]},
        read_only=True,
        source=RUNTIME,
    ),
    ToolSpec(
        "watch_resource",
        "Be woken when a resource changes: each change comes as a notice and runs a turn.",
        {
            "type": "object",
            "properties": {
                **_URI,
                "changes_only": {
                    "type": "boolean",
                    "description": "only when its content differs from the last seen",
                },
                "debounce": {
                    "type": "number",
                    "description": f"seconds of quiet before it is told (default {DEBOUNCE:g})",
                },
            },
            "required": ["uri"],
        },
        source=RUNTIME,
    ),
    ToolSpec(
        "unwatch_resource",
        "Stop watching a resource.",
        {"type": "object", "properties": _URI, "required": ["uri"]},
        source=RUNTIME,
    ),
    ToolSpec(
        "list_watches",
        "The resources being watched.",
        {"type": "object", "properties": {}},
        read_only=True,
        source=RUNTIME,
    ),
]
BUILTIN_NAMES = frozenset(t.name for t in BUILTINS)


@dataclass(slots=True)
class Watch:
    uri: str
    changes_only: bool = False
    debounce: float = DEBOUNCE
    last_hash: str | None = None
    inbox: bool = False  # followed by itself (a Caucus inbox), not asked for by the model


class WatchManager:
    def __init__(
        self,
        tools: McpTools,
        notify: Callable[[Notice], None],
        state: Path | None = None,
    ) -> None:
        self._tools = tools
        self._notify = notify
        self._state = state
        self.watches: dict[str, Watch] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.told = 0  # notices sent
        self.dropped = 0  # updates folded into another or found unchanged
        tools.on_resource_updated = self.updated
        tools.on_resources_changed = self.resources_changed
        self._following = asyncio.Lock()

    async def restore(self) -> str | None:
        """Watch again what the state file holds; a line for the On Start turn, if any."""
        if self._state is None or not self._state.exists():
            return None
        try:
            saved = json.loads(self._state.read_text("utf-8"))
            watches = [Watch(**w) for w in saved.get("watches", [])]
        except (OSError, ValueError, TypeError) as exc:
            log.warning("the watch state %s was not read (%s): starting without", self._state, exc)
            return None
        restored = []
        for w in watches[:WATCHES_MAX]:
            if await self._tools.subscribe(w.uri):
                self.watches[w.uri] = w
                restored.append(w.uri)
            else:
                log.warning("%s is no longer offered by any server: not watched", w.uri)
        self._save()
        if not restored:
            return None
        return "Watches restored from the last run: " + ", ".join(restored)

    async def watch(self, uri: str, *, changes_only: bool, debounce: float) -> str:
        if uri not in self.watches and len(self.watches) >= WATCHES_MAX:
            return f"at most {WATCHES_MAX} watches; unwatch one first"
        if not await self._tools.subscribe(uri):
            return f"no server can watch {uri!r} (it must offer it and support subscriptions)"
        watch = Watch(uri, changes_only, max(0.0, min(debounce, 3600.0)))
        if changes_only:
            with contextlib.suppress(LookupError):
                watch.last_hash = _digest(await self._tools.read_resource(uri))
        self.watches[uri] = watch
        self._save()
        return f"watching {uri}"

    async def unwatch(self, uri: str) -> str:
        if self.watches.pop(uri, None) is None:
            return f"{uri} was not watched"
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        await self._tools.subscribe(uri, on=False)
        self._save()
        return f"no longer watching {uri}"

    @property
    def busy(self) -> bool:
        """A change is being followed or told: more may be watched in a moment."""
        return bool(self._tasks) or bool(self._pending)

    def resources_changed(self) -> None:
        """A server's resource list changed: follow the inboxes it lists now."""
        self._spawn(self.follow_inboxes())

    async def follow_inboxes(self) -> None:
        async with self._following:  # one change at a time: the same news may come twice
            try:
                listed = {r["uri"] for r in await self._tools.list_resources()}
            except Exception as exc:  # a server failed to list: try on its next change
                log.warning("listing resources failed: %s", exc)
                return
            inboxes = {uri for uri in listed if uri.startswith(INBOX)}
            for uri in [u for u, w in self.watches.items() if w.inbox and u not in inboxes]:
                self.watches.pop(uri)
                await self._tools.subscribe(uri, on=False)
            for uri in sorted(inboxes - set(self.watches)):
                if await self._tools.subscribe(uri):
                    self.watches[uri] = Watch(uri, debounce=INBOX_DEBOUNCE, inbox=True)
                    log.info("following the inbox %s", uri)

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def updated(self, uri: str) -> None:
        """A server says `uri` changed: told after its debounce, once for a burst."""
        watch = self.watches.get(uri)
        if watch is None:
            return
        earlier = self._pending.pop(uri, None)
        if earlier is not None:
            earlier.cancel()
            self.dropped += 1
        loop = asyncio.get_running_loop()
        self._pending[uri] = loop.call_later(watch.debounce, self._due, uri)

    def _due(self, uri: str) -> None:
        self._pending.pop(uri, None)
        self._spawn(self._tell(uri))

    async def _tell(self, uri: str) -> None:
        watch = self.watches.get(uri)
        if watch is None:
            return
        try:
            content = await self._tools.read_resource(uri)
        except LookupError as exc:
            content = f"(it could not be read: {exc})"
        digest = _digest(content)
        if watch.changes_only and digest == watch.last_hash:
            self.dropped += 1
            return
        watch.last_hash = digest
        self._save()
        preview = content[:PREVIEW] + ("…" if len(content) > PREVIEW else "")
        self.told += 1
        said = f"{uri} changed. It now reads:\n{preview}"
        if watch.inbox:
            said = f"New messages wait in your Caucus inbox: call listen to take them.\n{said}"
        self._notify(Notice(f"resource:{uri}", said))

    def _save(self) -> None:
        if self._state is None:
            return
        body = {"watches": [asdict(w) for w in self.watches.values() if not w.inbox]}
        try:
            private_dir(self._state.parent)
            replace_atomically(self._state, json.dumps(body).encode("utf-8"), mode=0o600)
        except OSError as exc:
            log.error("the watch state %s could not be written: %s", self._state, exc)

    async def close(self) -> None:
        for handle in self._pending.values():
            handle.cancel()
        self._pending.clear()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


class ResourceTools:
    """The servers' tools, with the resource builtins in front."""

    def __init__(self, tools: McpTools, watches: WatchManager) -> None:
        self._tools = tools
        self._watches = watches

    async def list_tools(self) -> list[ToolSpec]:
        return [*BUILTINS, *await self._tools.list_tools()]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if name not in BUILTIN_NAMES:
            return await self._tools.call(name, arguments)
        uri = arguments.get("uri")
        if name in ("read_resource", "watch_resource", "unwatch_resource") and not (
            isinstance(uri, str) and uri
        ):
            return ToolResult(f"{name} needs a uri", is_error=True)
        assert uri is None or isinstance(uri, str)
        try:
            if name == "list_resources":
                return ToolResult(json.dumps(await self._tools.list_resources()))
            if name == "read_resource":
                return ToolResult(await self._tools.read_resource(str(uri)))
            if name == "watch_resource":
                debounce = arguments.get("debounce", DEBOUNCE)
                said = await self._watches.watch(
                    str(uri),
                    changes_only=bool(arguments.get("changes_only", False)),
                    debounce=float(debounce) if isinstance(debounce, int | float) else DEBOUNCE,
                )
                return ToolResult(said, is_error=not said.startswith("watching"))
            if name == "unwatch_resource":
                return ToolResult(await self._watches.unwatch(str(uri)))
            listed = [asdict(w) for w in self._watches.watches.values()]
            return ToolResult(
                json.dumps([{k: v for k, v in w.items() if k != "last_hash"} for w in listed])
            )
        except LookupError as exc:
            return ToolResult(str(exc), is_error=True)

    @contextlib.asynccontextmanager
    async def run_scope(self) -> AsyncIterator[None]:
        async with self._tools.run_scope():
            yield
