"""The transcript as a download: JSON, Markdown or plain text, streamed page by page."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

from caucus.domain.messages import Message
from caucus.domain.retention import Dropped
from caucus.errors import QueryTimeout
from caucus.wire.messages import RoutedMessage

# A page of the transcript after a seq: the room's whole (the operator's export) or what one
# agent may read (`History.readable_after`).
Pages = Callable[[int], Awaitable[list[Message]]]

PAGE = 1000
EXPORT_TYPES = {
    "json": "application/json",
    "markdown": "text/markdown; charset=utf-8",
    "text": "text/plain; charset=utf-8",
}


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Stopped:
    """Why an export ended early (a page past its time budget: `QueryTimeout`), if it did:
    the download then ends with a line saying so, never cut off mid-record."""

    def __init__(self) -> None:
        self.reason: str | None = None


async def _messages(pages: Pages, stopped: Stopped) -> AsyncIterator[Message]:
    after = 0
    while True:
        try:
            page = await pages(after)
        except QueryTimeout as exc:
            stopped.reason = f"{exc.detail} (export again with since after the last message)"
            return
        for message in page:
            yield message
        if len(page) < PAGE:
            return
        after = page[-1].seq


def _markdown(m: Message) -> str:
    recipients = ", ".join(m.delivered_to or []) or "nobody"
    quoted = "\n".join("> " + line if line else ">" for line in m.content.splitlines() or [""])
    head = f"**#{m.seq}** · {_when(m.ts)} · **{m.sender} → {m.to}** · {m.kind}"
    return f"{head} · delivered to {recipients}\n\n{quoted}\n\n"


def _text(m: Message) -> str:
    lines = m.content.splitlines() or [""]
    body = lines[0] + "".join("\n    " + line for line in lines[1:])
    return f"{_when(m.ts)} #{m.seq} {m.sender} -> {m.to} [{m.kind}]: {body}\n"


def _dropped_line(dropped: Dropped | None) -> str:
    if dropped is None or not dropped.messages:
        return ""
    through = f" (through {_when(dropped.through_ts)})" if dropped.through_ts else ""
    return f"Retention dropped {dropped.messages} older messages{through}.\n"


async def export_chunks(
    pages: Pages,
    fmt: str,
    since: float | None,
    until: float | None,
    now: float,
    dropped: Dropped | None = None,
) -> AsyncIterator[bytes]:
    stopped = Stopped()
    if fmt == "json":
        header: dict[str, object] = {"exported_at": _when(now), "since": since, "until": until}
        header["dropped_by_retention"] = (
            {
                "messages": dropped.messages,
                "through_seq": dropped.through_seq,
                "through_ts": dropped.through_ts,
            }
            if dropped is not None and dropped.messages
            else None
        )
        yield (json.dumps(header)[:-1] + ', "messages": [').encode()
        first = True
        async for m in _messages(pages, stopped):
            item = RoutedMessage.of(m).model_dump_json()
            yield (("" if first else ",\n") + item).encode()
            first = False
        yield (f"], {json.dumps('stopped')}: {json.dumps(stopped.reason)}}}\n").encode()
        return
    if fmt == "markdown":
        span = f"from {_when(since)} " if since else ""
        span += f"until {_when(until)}" if until else ""
        yield f"# Caucus transcript\n\nExported {_when(now)} {span}\n\n".encode()
        if line := _dropped_line(dropped):
            yield f"_{line.strip()}_\n\n".encode()
        async for m in _messages(pages, stopped):
            yield _markdown(m).encode()
        if stopped.reason:
            yield f"_Stopped early: {stopped.reason}_\n".encode()
        return
    if line := _dropped_line(dropped):
        yield f"# {line}".encode()
    async for m in _messages(pages, stopped):
        yield _text(m).encode()
    if stopped.reason:
        yield f"# Stopped early: {stopped.reason}\n".encode()
