"""One deliberation from a config to the ledger: evidence gathered (fail closed), the panel
and the chair on the configured backend, the record chained, the anchor command run."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from caucus.deliberation.config import DeliberationConfig
from caucus.deliberation.engine import ModelAnalyst, ModelChair, OnStep, Outcome, deliberate
from caucus.deliberation.evidence import gather
from caucus.deliberation.intents import IntentStore
from caucus.deliberation.memory import notes
from caucus.deliberation.setup import Backend
from caucus.ledger.chain import Ledger, anchor


@dataclass(frozen=True, slots=True)
class Recorded:
    outcome: Outcome
    index: int
    record: dict[str, Any]
    log: Path


async def run_one(
    config: DeliberationConfig,
    backend: Backend,
    subject: str,
    *,
    evidence_file: Path | None = None,
    extra_evidence: Sequence[Mapping[str, Any]] = (),
    on_step: OnStep,
) -> Recorded:
    evidence = await gather(evidence_file, config.sources(), extra_evidence)
    panel = [ModelAnalyst(a, backend.completer, on_step) for a in config.analysts()]
    chair = ModelChair(backend.completer, on_step)
    outcome = await deliberate(
        subject,
        panel,
        chair,
        evidence=evidence,
        stances=config.stances,
        max_rounds=config.max_rounds,
        on_step=on_step,
    )
    index, sealed = await asyncio.to_thread(Ledger(config.log).record, outcome.record())
    return Recorded(outcome, index, sealed, config.log)


class AnchorCommandError(Exception):
    pass


def anchor_and_run(config: DeliberationConfig) -> tuple[dict[str, Any], str | None]:
    """Record the verified head in `<log>.anchors`, then run `anchor_command` (e.g. commit and
    push the anchors file) with the entry in its environment; returns the entry and the
    command's output."""
    entry = anchor(config.log)
    command = config.anchor_command
    if command is None:
        return entry, None
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    env_extra = {
        "CAUCUS_LEDGER": str(config.log),
        "CAUCUS_ANCHORS": str(config.log.with_name(config.log.name + ".anchors")),
        "CAUCUS_HEAD_HASH": entry["head_hash"],
        "CAUCUS_RECORD_COUNT": str(entry["count"]),
    }
    try:
        done = subprocess.run(  # noqa: S603 (the operator's own configured command)
            argv,
            capture_output=True,
            text=True,
            env={**os.environ, **env_extra},
            cwd=config.log.parent,
            timeout=300,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AnchorCommandError(f"anchor_command did not run: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-400:]
        raise AnchorCommandError(
            f"anchor_command exited with {done.returncode} (the head is anchored in the "
            f"anchors file, but was not carried off the machine): {tail}"
        )
    return entry, done.stdout


def room_evidence(config: DeliberationConfig, today: date) -> list[dict[str, Any]]:
    """What the deliberations of this directory already know: the open intents and the
    freshest memory notes."""
    items: list[dict[str, Any]] = []
    if config.intents.exists():
        items += [
            i.evidence(today) for i in IntentStore(config.intents).list(today) if i.status == "open"
        ]
    items += notes(config.memory, today, config.half_life_days)
    return items
