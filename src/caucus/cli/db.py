"""`caucus db`: the database from the command line: its schema version, its migrations, and
retention's purge (`cli/purge.py`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from caucus.cli.db_import import import_history
from caucus.cli.purge import purge
from caucus.errors import CaucusError

if TYPE_CHECKING:  # the storage and the services load when a command runs, not with the CLI
    from caucus.config import Settings
    from caucus.storage.migrate import Migration

db_app = typer.Typer(
    help="The hub's database: its schema version and migrations, purging what retention "
    "would drop, and importing another room's history.",
    no_args_is_help=True,
)
err = Console(stderr=True, highlight=False)
db_app.command("purge")(purge)
db_app.command("import")(import_history)


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
