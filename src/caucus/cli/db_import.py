"""`caucus db import`: a room's history carried into this database, in bulk
(`services/history_import.py`): a transcript export, or JSON Lines of messages, from a file or
standard input."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any

import typer

from caucus.cli.common import err
from caucus.errors import CaucusError, InvalidRequest

if TYPE_CHECKING:  # the storage and the services load when the command runs
    from caucus.services.history_import import ImportReport

SAY_EVERY = 2.0  # seconds between progress lines


class BadRecord(InvalidRequest):
    """A message in the file this room would not have accepted."""


def _messages(stream: IO[str]) -> Iterator[tuple[int, Any]]:
    """(line or position, message as parsed JSON): JSON Lines, or one export document (whose
    first line is not a message on its own)."""
    first = stream.readline()
    try:
        head = json.loads(first) if first.strip() else None
    except ValueError:
        head = None
    if isinstance(head, dict) and "messages" not in head:
        yield 1, head
        for n, line in enumerate(stream, start=2):
            if line.strip():
                yield n, line
        return
    if head is None and not first.strip():
        return
    try:
        document = head if head is not None else json.loads(first + stream.read())
    except ValueError as exc:
        raise BadRecord(f"the file is neither JSON Lines nor a transcript export: {exc}") from None
    items = document.get("messages") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise BadRecord("a transcript export holds a list of messages under 'messages'")
    yield from enumerate(items, start=1)


def rows(stream: IO[str], max_content: int) -> Iterator[dict[str, Any]]:
    """Each message of `stream` as `message_import` stores it; a BadRecord naming where."""
    from pydantic import ValidationError

    from caucus.services.history_import import archived_row
    from caucus.wire.messages import RoutedMessage

    for where, item in _messages(stream):
        try:
            if isinstance(item, str):
                m = RoutedMessage.model_validate_json(item)
            else:
                m = RoutedMessage.model_validate(item)
            yield archived_row(m.message(), max_content)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "message"
            raise BadRecord(f"message {where}: {field}: {first['msg']}") from None
        except CaucusError as exc:
            raise BadRecord(f"message {where}: {exc.detail}") from None


class _Progress:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.said = time.monotonic()
        self.stored = 0

    def __call__(self, stage: str, count: int) -> None:
        if stage == "stored":
            self.stored = count
        now = time.monotonic()
        if not self.quiet and now - self.said >= SAY_EVERY:
            self.said = now
            err.print(f"{stage} {count:,} messages")


async def _load(settings: Any, stream: IO[str], progress: _Progress) -> ImportReport:
    from caucus.services.history_import import HistoryImport
    from caucus.services.hub import open_engine

    engine = open_engine(settings)
    await engine.open()
    try:
        loader = HistoryImport(engine, settings.max_content_chars)
        return await loader.load(rows(stream, settings.max_content_chars), progress)
    finally:
        await engine.close()


def import_history(
    file: Annotated[
        str,
        typer.Argument(
            help="a transcript export (JSON, from the console or GET /export) or JSON Lines, "
            "one message a line; '-' reads standard input"
        ),
    ],
    db: Annotated[
        str | None, typer.Option(help="SQLite file or postgresql:// URL (default: as `caucus hub`)")
    ] = None,
    config: Annotated[
        Path | None, typer.Option(help="TOML config file, as for `caucus hub`")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
) -> None:
    """Carry a room's history into this database: its messages, appended as archived history
    (no inbox holds them; names do not carry identities, so only the operator reads imported
    directs), then the search index caught up. A message already here is skipped, so an
    import stopped halfway is finished by running it again. A SQLite file must not be open in
    a running hub; a PostgreSQL database may be."""
    import asyncio

    from caucus.config import load_settings

    settings = load_settings(config, db=db)
    progress = _Progress(quiet=json_output)
    try:
        with sys.stdin if file == "-" else open(file, encoding="utf-8") as stream:
            report = asyncio.run(_load(settings, stream, progress))
    except OSError as exc:
        err.print(f"[bold red]error:[/] cannot read {file}: {exc.strerror}")
        raise typer.Exit(2) from None
    except BadRecord as exc:
        err.print(f"[bold red]error:[/] {exc.detail}")
        err.print(
            f"{progress.stored:,} messages before it are stored; fix the file and run the "
            "same command again (what is here already is skipped)"
        )
        raise typer.Exit(2) from None
    except CaucusError as exc:
        err.print(f"[bold red]error:[/] {exc.detail}")
        raise typer.Exit(2) from None
    result = {"database": settings.db_shown(), "read": report.read, "added": report.added}
    result.update(skipped=report.skipped, indexed=report.indexed)
    if json_output:
        print(json.dumps(result))
        return
    print(
        f"{settings.db_shown()}: added {report.added:,} of {report.read:,} messages "
        f"({report.skipped:,} were here already); search index caught up"
    )
