"""`caucus db purge`: drop what retention would, now, through the running hub (or straight in
the database when no hub runs), and say how much it freed."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from caucus.credentials import OPERATOR_TOKEN_FILE
from caucus.errors import CaucusError, StorageError

if TYPE_CHECKING:  # the storage and the services load when a command runs, not with the CLI
    from caucus.wire.retention import PurgeResult

err = Console(stderr=True, highlight=False)


def _mb(n: int) -> str:
    return f"{n / 1_048_576:.1f} MB"


def _say(result: PurgeResult) -> str:
    what = (
        f"{result.messages} messages, {result.tasks} tasks, {result.offers} offers and "
        f"{result.forms} forms older than "
        f"{datetime.fromtimestamp(result.before, UTC).isoformat(timespec='seconds')}"
    )
    if result.dry_run:
        return f"would drop {what} (database {_mb(result.size_before.file_bytes)})"
    return (
        f"dropped {what}; database {_mb(result.size_before.file_bytes)} -> "
        f"{_mb(result.size_after.file_bytes)}"
    )


async def _purge_file(
    db: str | None, config: Path | None, before: float | None, dry: bool
) -> PurgeResult:
    from caucus.clock import SystemClock
    from caucus.config import load_settings
    from caucus.services.hub import open_engine
    from caucus.services.retention import Retention
    from caucus.wire.retention import PurgeResult

    settings = load_settings(config, db=db)
    engine = open_engine(settings)
    await engine.open()
    try:
        report = await Retention(engine, SystemClock(), settings).purge(before, dry_run=dry)
    finally:
        await engine.close()
    return PurgeResult.of(report)


def _purge_hub(hub: str, token: str, before: float | None, dry: bool) -> PurgeResult:
    import httpx2

    from caucus.wire.retention import PurgeResult

    body = {"before": before, "dry_run": dry}
    response = httpx2.post(
        f"{hub.rstrip('/')}/operator/purge",
        json=body,
        headers={"Authorization": f"Bearer {token}"},
        timeout=600,
    )
    if response.status_code != 200:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        raise CaucusError(f"the hub answered {response.status_code}: {detail}")
    return PurgeResult.model_validate(response.json())


def kept_operator_token(file: Path | None, db: str | None, config: Path | None) -> str:
    """The operator token: from `file`, else $CAUCUS_OPERATOR_TOKEN, else the one the hub keeps
    beside its database."""
    if file is not None:
        return file.expanduser().read_text(encoding="utf-8").strip()
    if os.environ.get("CAUCUS_OPERATOR_TOKEN"):
        return os.environ["CAUCUS_OPERATOR_TOKEN"]
    from caucus.config import load_settings

    kept = load_settings(config, db=db).data_dir() / OPERATOR_TOKEN_FILE
    return kept.read_text(encoding="utf-8").strip()


def purge(
    before: Annotated[
        str | None,
        typer.Option(
            help="drop finished items older than this (ISO 8601 or epoch seconds); "
            "default: the retention age"
        ),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="only say what would go")] = False,
    db: Annotated[
        str | None, typer.Option(help="the SQLite file (default: as `caucus hub`)")
    ] = None,
    config: Annotated[
        Path | None, typer.Option(help="TOML config file, as for `caucus hub`")
    ] = None,
    hub: Annotated[
        str | None,
        typer.Option(help="purge through this running hub (POST /operator/purge) instead"),
    ] = None,
    operator_token_file: Annotated[
        Path | None, typer.Option(help="with --hub: the operator's token (default: the kept one)")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
) -> None:
    """Drop finished items older than a date, then compact the file.

    Acknowledged messages, ended tasks, settled offers, and answered or canceled forms go;
    never anything unacknowledged or unended, and never the decision ledger."""
    from caucus.wire.fields import parse_time

    try:
        cut = parse_time(before, "before") if before else None
        if hub is not None:
            token = kept_operator_token(operator_token_file, db, config)
            result = _purge_hub(hub, token, cut, dry_run)
        else:
            import asyncio  # lazily: `caucus --help` never loads it

            result = asyncio.run(_purge_file(db, config, cut, dry_run))
    except StorageError as exc:
        err.print(f"[bold red]error:[/] {exc.detail}")
        err.print(
            "[dim]a running hub holds the file: purge through it with "
            "`caucus db purge --hub http://127.0.0.1:8765`[/]"
        )
        raise typer.Exit(2) from None
    except (CaucusError, OSError, ValueError) as exc:
        err.print(f"[bold red]error:[/] {getattr(exc, 'detail', None) or exc}")
        raise typer.Exit(2) from None
    if json_output:
        print(json.dumps(result.model_dump()))
    else:
        print(_say(result))
