"""`caucus db`: the database from the command line (retention's purge, for now)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from caucus.credentials import OPERATOR_TOKEN_FILE
from caucus.errors import CaucusError, StorageError

if TYPE_CHECKING:  # the storage and the services load when a command runs, not with the CLI
    from caucus.config import Settings
    from caucus.storage.migrate import Migration
    from caucus.wire.retention import PurgeResult

db_app = typer.Typer(
    help="The hub's database: its schema version and migrations, and purging what retention "
    "would drop.",
    no_args_is_help=True,
)
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


@db_app.command("purge")
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


def _schema(db: str | None, config: Path | None) -> tuple[str, str, list[int]]:
    """(the database as shown, its dialect, the migrations it has had)."""
    from caucus.config import load_settings
    from caucus.storage.migrate import applied_postgres, applied_sqlite

    settings = load_settings(config, db=db)
    if settings.postgres:
        return settings.db_shown(), "postgres", applied_postgres(settings.db)
    return settings.db_shown(), "sqlite", applied_sqlite(settings.db_path())


@dataclass(frozen=True, slots=True)
class SchemaReport:
    database: str
    dialect: str
    applied: list[int]
    pending: list[Migration]

    @property
    def version(self) -> int:
        return max(self.applied, default=0)

    def record(self) -> dict[str, object]:
        return {
            "database": self.database,
            "dialect": self.dialect,
            "version": self.version,
            "applied": self.applied,
            "pending": [{"version": m.version, "name": m.name} for m in self.pending],
        }


def _schema_report(shown: str, dialect: str, applied: list[int]) -> SchemaReport:
    from caucus.storage.migrate import load_migrations

    pending = [m for m in load_migrations(dialect) if m.version not in applied]
    return SchemaReport(shown, dialect, applied, pending)


_DB_OPTION = typer.Option(help="SQLite file or postgresql:// URL (default: as `caucus hub`)")
_CONFIG_OPTION = typer.Option(help="TOML config file, as for `caucus hub`")
_JSON_OPTION = typer.Option("--json", help="print the result as JSON")


@db_app.command("status")
def status(
    db: Annotated[str | None, _DB_OPTION] = None,
    config: Annotated[Path | None, _CONFIG_OPTION] = None,
    json_output: Annotated[bool, _JSON_OPTION] = False,
) -> None:
    """Which schema version the database is at and which migrations it still needs (a hub
    applies them when it starts; `caucus db migrate` does it beforehand)."""
    try:
        report = _schema_report(*_schema(db, config))
    except Exception as exc:
        err.print(f"[bold red]error:[/] cannot read the database's schema: {exc}")
        raise typer.Exit(2) from None
    if json_output:
        print(json.dumps(report.record()))
        return
    print(f"{report.database} ({report.dialect}): schema version {report.version}")
    if report.pending:
        names = ", ".join(f"{m.version:04d}_{m.name}" for m in report.pending)
        print(f"{len(report.pending)} migration(s) to apply: {names} (caucus db migrate)")
    else:
        print("up to date")


@db_app.command("migrate")
def migrate(
    db: Annotated[str | None, _DB_OPTION] = None,
    config: Annotated[Path | None, _CONFIG_OPTION] = None,
    json_output: Annotated[bool, _JSON_OPTION] = False,
) -> None:
    """Apply the migrations the database still needs, each in its own transaction. Safe to run
    while other hub processes share a PostgreSQL database (they take turns); a SQLite file must
    not be open in a running hub."""
    from caucus.config import load_settings

    settings = load_settings(config, db=db)
    try:
        shown, dialect, before = _schema(db, config)
        import asyncio  # lazily: `caucus --help` never loads it

        asyncio.run(_open_and_close(settings))
        after = _schema(db, config)[2]
    except CaucusError as exc:
        err.print(f"[bold red]error:[/] {exc.detail}")
        raise typer.Exit(2) from None
    except Exception as exc:
        err.print(f"[bold red]error:[/] could not migrate the database: {exc}")
        raise typer.Exit(2) from None
    applied = [v for v in after if v not in before]
    if json_output:
        print(
            json.dumps({**_schema_report(shown, dialect, after).record(), "applied_now": applied})
        )
    elif applied:
        print(f"{shown}: applied {len(applied)} migration(s); schema version {max(after)}")
    else:
        print(f"{shown}: already at schema version {max(after, default=0)}; nothing to do")


async def _open_and_close(settings: Settings) -> None:
    from caucus.services.hub import open_engine

    engine = open_engine(settings)  # opening migrates, under the backend's own lock
    await engine.open()
    await engine.close()
