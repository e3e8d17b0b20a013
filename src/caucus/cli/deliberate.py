"""`caucus deliberate`: a panel on a model decides SUBJECT, and the ledger records it."""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:  # the model clients and the config's parser load when a command runs
    from caucus.deliberation.engine import Step
    from caucus.deliberation.run import Recorded

USAGE, FAILED = 2, 1


def fail(message: str, code: int) -> typer.Exit:
    sys.stderr.write(f"error: {message}\n")
    return typer.Exit(code)


def progress(step: Step) -> None:
    """One line per analyst and round on stderr, for a person waiting."""
    where = f"round {step.round}" if step.round else "verdict"
    text = {
        "asking": f"{where}: asking {step.who}…",
        "answered": f"{where}: {step.who} answered ({step.detail})",
        "retrying": f"{where}: {step.who} again — {step.detail}",
        "absent": f"{where}: {step.who} absent ({step.detail})",
        "deciding": f"the chair weighs {step.round} round(s)…",
        "decided": f"the chair decided ({step.detail})",
    }.get(step.kind, f"{where}: {step.who} {step.kind}")
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def shown(path: Path) -> Path:
    """`path` as the person typed it: relative to where they stand when it is below it."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def describe(done: Recorded) -> list[str]:
    outcome = done.outcome
    lines = [
        f"DECISION ({round(outcome.verdict.confidence * 100)}% confidence): "
        f"{outcome.verdict.decision}"
    ]
    lines += [f"DISSENT [{p.agent}]: {p.summary}" for p in outcome.dissent]
    lines += [f"ABSENT [{name}]" for name in outcome.absent]
    lines.append(f"On the record: {shown(done.log)} (hash {done.record['hash'][:12]}…)")
    return lines


def as_json(done: Recorded) -> dict[str, Any]:
    return {"log": str(done.log), "index": done.index, "record": done.record}


def deliberate(
    subject: Annotated[str, typer.Argument(help="what is to be decided")],
    evidence: Annotated[
        Path | None,
        typer.Option("--evidence", help="a JSON file: a list of objects (source, ref, …)"),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="a config.yaml (default: ./config.yaml when no flags)"),
    ] = None,
    backend: Annotated[str | None, typer.Option("--backend", help="openai or claude-cli")] = None,
    model: Annotated[str | None, typer.Option("--model", help="the model's name")] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="the OpenAI-compatible server's /v1 URL")
    ] = None,
    rounds: Annotated[
        int | None, typer.Option("--rounds", help="at most this many rounds, 1-4 (default 2)")
    ] = None,
    log: Annotated[
        Path | None, typer.Option("--log", help="the ledger (default decisions.jsonl)")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="print the record as JSON")] = False,
) -> None:
    """Convene a panel of analysts on a model over SUBJECT; the chair's decision is recorded."""
    from caucus.deliberation.config import ConfigError
    from caucus.deliberation.engine import DeliberationError
    from caucus.deliberation.evidence import EvidenceError
    from caucus.deliberation.run import room_evidence, run_one
    from caucus.deliberation.setup import backend_for, resolve
    from caucus.errors import CaucusError
    from caucus.models.seam import BackendError

    flags = {"backend": backend, "model": model, "base_url": base_url, "rounds": rounds, "log": log}
    try:
        settings, _ = resolve(config, flags, cwd=Path.cwd())
    except ConfigError as exc:
        raise fail(str(exc), USAGE) from None

    async def go() -> Recorded:
        async with backend_for(settings) as chosen:
            sys.stderr.write(f"deliberating on {chosen.describe}\n")
            return await run_one(
                settings,
                chosen,
                subject,
                evidence_file=evidence,
                extra_evidence=room_evidence(settings, date.today()),
                on_step=progress,
            )

    try:
        import asyncio  # lazily: `caucus --help` never loads it

        done = asyncio.run(go())
    except ConfigError as exc:
        raise fail(str(exc), USAGE) from None
    except (DeliberationError, EvidenceError, BackendError, CaucusError) as exc:
        raise fail(f"nothing was recorded: {exc}", FAILED) from None
    if json_output:
        print(json.dumps(as_json(done)))
        return
    print("\n".join(describe(done)))
