"""`caucus intents …` and `caucus outcome`: the standing goals, and what became of decisions."""

from __future__ import annotations

import json
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from caucus.cli.deliberate import USAGE, fail

if TYPE_CHECKING:  # the config's parser and the intents' store load when a command runs
    from caucus.deliberation.config import DeliberationConfig
    from caucus.deliberation.intents import Intent

intents_app = typer.Typer(help="Standing intents that briefings deliberate against.")

ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="a config.yaml (default: ./config.yaml)")
]
JsonOption = Annotated[bool, typer.Option("--json", help="print as JSON")]


def settings(config: Path | None) -> DeliberationConfig:
    from caucus.deliberation.config import ConfigError, find, load, parse

    try:
        if config is not None:
            return load(config)
        found = find(Path.cwd())
        return load(found) if found else parse({}, origin="the defaults").resolved(Path.cwd())
    except ConfigError as exc:
        raise fail(str(exc), USAGE) from None


def _show(intent: Intent, today: date) -> str:
    due = " (due)" if intent.due(today) else ""
    pause = f" until {intent.paused_until}" if intent.paused_until else ""
    return (
        f"{intent.name}: {intent.direction} {intent.target}".rstrip()
        + f" [{intent.status}{pause}]{due}, every {intent.cadence_days} day(s)"
        + (f", last acted {intent.last_acted}" if intent.last_acted else "")
    )


@intents_app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="a short unique name")],
    direction: Annotated[str, typer.Option(help="where it should go (e.g. increase, reach)")],
    target: Annotated[str, typer.Option(help="what it aims at")] = "",
    pacing: Annotated[str, typer.Option(help="how fast (e.g. gradual, at once)")] = "",
    cadence_days: Annotated[int, typer.Option(help="act on it every N days")] = 7,
    config: ConfigOption = None,
    json_output: JsonOption = False,
) -> None:
    """Add an intent."""
    from caucus.deliberation.intents import Intent, IntentError, IntentStore

    store = IntentStore(settings(config).intents)
    try:
        intent = store.add(Intent(name, direction, target, pacing, cadence_days))
    except IntentError as exc:
        raise fail(str(exc), USAGE) from None
    print(json.dumps(intent.wire()) if json_output else f"added {_show(intent, date.today())}")


@intents_app.command("list")
def list_intents(config: ConfigOption = None, json_output: JsonOption = False) -> None:
    """List intents, with their state as of today."""
    from caucus.deliberation.intents import IntentStore

    today = date.today()
    found = IntentStore(settings(config).intents).list(today)
    if json_output:
        print(json.dumps([i.wire() | {"due": i.due(today)} for i in found]))
        return
    print("\n".join(_show(i, today) for i in found) if found else "no intents yet")


def _parse_sets(sets: list[str]) -> dict[str, Any]:
    from caucus.deliberation.intents import FIELDS, IntentError

    changes: dict[str, Any] = {}
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep or key not in FIELDS:
            raise IntentError(f"--set takes FIELD=VALUE with FIELD one of {', '.join(FIELDS)}")
        changes[key] = value if value != "" else None
    return changes


@intents_app.command("update")
def update(
    name: Annotated[str, typer.Argument(help="the intent")],
    set_: Annotated[
        list[str], typer.Option("--set", help="FIELD=VALUE; paused_until=DATE pauses it")
    ],
    config: ConfigOption = None,
    json_output: JsonOption = False,
) -> None:
    """Change fields of an intent."""
    from caucus.deliberation.intents import IntentError, IntentStore

    store = IntentStore(settings(config).intents)
    try:
        intent = store.update(name, _parse_sets(set_), date.today())
    except IntentError as exc:
        raise fail(str(exc), USAGE) from None
    print(json.dumps(intent.wire()) if json_output else f"updated {_show(intent, date.today())}")


@intents_app.command("apply")
def apply(
    briefing: Annotated[
        Path, typer.Option("--from", help="the briefing.json with the proposals")
    ] = Path("briefing.json"),
    yes: Annotated[bool, typer.Option("--yes", help="apply every proposal without asking")] = False,
    config: ConfigOption = None,
    json_output: JsonOption = False,
) -> None:
    """Apply a briefing's proposed intent updates, asking for each one."""
    from caucus.deliberation.intents import IntentError, IntentStore

    try:
        proposals = json.loads(briefing.read_text(encoding="utf-8"))["proposals"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise fail(f"cannot read proposals from {briefing}: {exc}", USAGE) from None
    store = IntentStore(settings(config).intents)
    today = date.today()
    applied, skipped = [], []
    for p in proposals:
        changes = ", ".join(f"{k} → {v}" for k, v in p["changes"].items())
        sys.stderr.write(f"{p['intent']}: {changes}\n  because {p['reason']}\n")
        if not yes and not typer.confirm("apply this?", default=False, err=True):
            skipped.append(p["intent"])
            continue
        try:
            store.update(p["intent"], p["changes"], today)
        except IntentError as exc:
            sys.stderr.write(f"  not applied: {exc}\n")
            skipped.append(p["intent"])
            continue
        applied.append(p["intent"])
    if json_output:
        print(json.dumps({"applied": applied, "skipped": skipped}))
    else:
        print(f"applied {len(applied)}, skipped {len(skipped)}")


def outcome(
    record: Annotated[str, typer.Argument(help="the decision: its index or a hash prefix")],
    result: Annotated[str, typer.Option("--result", help="held, failed or mixed")],
    note: Annotated[str, typer.Option("--note", help="what happened, in words")] = "",
    config: ConfigOption = None,
    json_output: JsonOption = False,
) -> None:
    """Record what became of a decision; reflect on every outcome so far and write the lesson
    to the memory notes that later deliberations read."""
    from caucus.deliberation.intents import IntentStore
    from caucus.deliberation.memory import (
        RESULTS,
        append_note,
        find_record,
        lesson,
        read_records,
        scores,
    )

    if result not in RESULTS:
        raise fail(f"--result is one of {', '.join(RESULTS)}", USAGE)
    cfg = settings(config)
    records = read_records(cfg.log)
    try:
        chosen = find_record(records, record)
    except LookupError as exc:
        raise fail(f"{exc} (in {cfg.log})", USAGE) from None
    store = IntentStore(cfg.intents)
    store.record_outcome(chosen["hash"], RESULTS[result], note, datetime.now(UTC).isoformat())
    found = scores(records, {h: v[0] for h, v in store.outcomes().items()})
    text = lesson(found)
    append_note(cfg.memory, date.today(), text)
    if json_output:
        print(
            json.dumps(
                {
                    "record": chosen["hash"],
                    "result": result,
                    "scores": [
                        {
                            "who": s.who,
                            "brier": s.brier,
                            "decisions": s.decisions,
                            "mean_confidence": s.mean_confidence,
                        }
                        for s in found
                    ],
                    "memory": str(cfg.memory),
                }
            )
        )
        return
    print(f"recorded: {chosen['subject']!r} {result}")
    print(text)
    print(f"noted in {cfg.memory}")
