"""`caucus briefing` and `caucus init`."""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from caucus.cli.deliberate import FAILED, USAGE, fail, progress, shown
from caucus.cli.intents import ConfigOption, JsonOption, settings
from caucus.errors import CaucusError
from caucus.files import private_dir

if TYPE_CHECKING:
    from caucus.deliberation.briefing import Briefing
    from caucus.deliberation.config import DeliberationConfig


def briefing(
    out: Annotated[
        Path | None, typer.Option("--out", help="where briefing.md and .json go (default: here)")
    ] = None,
    no_notify: Annotated[bool, typer.Option("--no-notify", help="write, but send nothing")] = False,
    config: ConfigOption = None,
    json_output: JsonOption = False,
) -> None:
    """Deliberate every agenda subject, record each, propose intent updates, write and send
    the briefing."""
    from caucus.deliberation.briefing import NotifyError, notify, write
    from caucus.deliberation.config import ConfigError
    from caucus.deliberation.engine import DeliberationError
    from caucus.deliberation.evidence import EvidenceError
    from caucus.errors import CaucusError
    from caucus.models.seam import BackendError

    cfg = settings(config)
    if not cfg.agenda:
        raise fail("the agenda is empty: list subjects under `agenda:` in config.yaml", USAGE)
    today = date.today()

    try:
        import asyncio  # lazily: `caucus --help` never loads it

        done = asyncio.run(_deliberate_agenda(cfg, today))
    except ConfigError as exc:
        raise fail(str(exc), USAGE) from None
    except (DeliberationError, EvidenceError, BackendError, CaucusError) as exc:
        raise fail(f"the briefing stopped: {exc}", FAILED) from None
    md, js = write(done, out or Path.cwd())
    sent: list[str] = []
    notify_error = None
    if not no_notify:
        try:
            sent = notify(cfg.notify, done)
        except NotifyError as exc:
            notify_error = str(exc)
    if json_output:
        files = [str(md), str(js)]
        print(
            json.dumps(done.wire() | {"files": files, "sent": sent, "notify_error": notify_error})
        )
    else:
        _say(done, md, js, sent)
    if notify_error:
        raise fail(notify_error, FAILED)


async def _deliberate_agenda(cfg: DeliberationConfig, today: date) -> Briefing:
    """Each subject of the agenda deliberated and recorded, then the intent updates."""
    from caucus.deliberation.briefing import Briefing, propose
    from caucus.deliberation.intents import IntentStore
    from caucus.deliberation.run import room_evidence, run_one
    from caucus.deliberation.setup import backend_for

    async with backend_for(cfg) as chosen:
        decided = []
        for number, subject in enumerate(cfg.agenda, 1):
            sys.stderr.write(f"[{number}/{len(cfg.agenda)}] {subject}\n")
            decided.append(
                await run_one(
                    cfg,
                    chosen,
                    subject,
                    extra_evidence=room_evidence(cfg, today),
                    on_step=progress,
                )
            )
        intents = []
        if cfg.intents.exists():
            intents = [i for i in IntentStore(cfg.intents).list(today) if i.status != "done"]
        proposals, dropped = await propose(chosen, decided, intents, today, progress)
        return Briefing(today, decided, proposals, dropped)


def _say(done: Briefing, md: Path, js: Path, sent: list[str]) -> None:
    for d in done.decided:
        v = d.outcome.verdict
        print(f"{d.outcome.subject}: {v.decision} ({round(v.confidence * 100)}%)")
    print(f"{len(done.proposals)} intent update(s) proposed; `caucus intents apply` asks")
    print(f"wrote {shown(md)} and {shown(js)}" + (f"; {', '.join(sent)}" if sent else ""))


TEMPLATE = """\
# Caucus deliberation config (`caucus deliberate`, `caucus briefing`, `caucus anchor`).
# Paths are relative to this file.

# The ledger every decision is chained onto; `caucus verify` checks it.
log: decisions.jsonl

# Rebuttal rounds while the panel disagrees (1-4); stops early on agreement or no change.
max_rounds: 2

backend:
  type: {type}            # openai (any OpenAI-compatible server) or claude-cli (claude -p)
  model: {model}
  base_url: {base_url}
  # api_key_env: OPENAI_API_KEY   # the variable holding the key, if the server wants one
  json_mode: false          # true: the server's JSON mode (small local models need it)
  # json_schema: true       # with json_mode on llama.cpp's server: each answer held to its schema
  # mcp_config: mcp.json          # MCP servers the analysts may read evidence from
  # allowed_tools: [search]       # only these (default: tools marked read-only)

# The analysts, each with a charge; and the stances a position may take.
panel:
  - name: advocate
    charge: Make the strongest honest case for acting on the subject.
  - name: skeptic
    charge: Find what is wrong with acting on the subject. Do not concede without a reason.
  - name: assessor
    charge: Weigh the subject on the evidence alone, as an impartial reviewer.
stances: [approve, reject, defer]

# Subjects `caucus briefing` deliberates, one after another.
agenda: []

# Commands that print a JSON list of evidence objects; a failing one stops the deliberation.
evidence_sources: []
#  - name: open-issues
#    command: gh issue list --json number,title
#    timeout_seconds: 30

# Standing intents (`caucus intents`), and the memory notes reflection writes.
intents: intents.db
memory: memory.md
half_life_days: 90

# How a briefing is sent: by email, and/or to a command on stdin.
notify: {{}}
#  email: {{host: 127.0.0.1, port: 25, sender: caucus@localhost, to: [you@example.org]}}
#  command: [notify-send, Caucus briefing]

# Run after `caucus anchor` records the head, e.g. to carry the anchors file off the machine.
# anchor_command: git commit -m "anchor" decisions.jsonl.anchors && git push
"""


def init(
    directory: Annotated[Path, typer.Argument(help="where config.yaml goes")] = Path("."),
    backend: Annotated[str, typer.Option("--backend", help="openai or claude-cli")] = "openai",
    model: Annotated[str, typer.Option("--model", help="the model's name")] = "local-model",
    base_url: Annotated[
        str, typer.Option("--base-url", help="the server's /v1 URL")
    ] = "http://127.0.0.1:8080/v1",
    force: Annotated[bool, typer.Option("--force", help="replace an existing config")] = False,
    json_output: JsonOption = False,
) -> None:
    """Write a commented config.yaml and check that its backend answers."""
    from caucus.deliberation.config import CONFIG_NAME, ConfigError, parse
    from caucus.deliberation.setup import backend_for
    from caucus.models.seam import BackendError

    path = directory / CONFIG_NAME
    if path.exists() and not force:
        raise fail(f"{path} exists; give --force to replace it", USAGE)
    text = TEMPLATE.format(type=backend, model=json.dumps(model), base_url=base_url)
    try:
        import yaml

        cfg = parse(yaml.safe_load(text), origin="the new config").resolved(directory)
    except ConfigError as exc:
        raise fail(str(exc), USAGE) from None
    private_dir(directory)
    path.write_text(text, "utf-8")

    async def check() -> str:
        async with backend_for(cfg) as chosen:
            reply = await chosen.completer.complete('Reply with the JSON object {"ok": true}.')
            return f"{chosen.describe} answered ({len(reply)} characters)"

    try:
        import asyncio  # lazily: `caucus --help` never loads it

        said, ok = asyncio.run(check()), True
    except (BackendError, ConfigError, OSError) as exc:
        said, ok = f"the backend did not answer: {exc}", False
    if json_output:
        print(json.dumps({"config": str(path), "backend_ok": ok, "detail": said}))
    else:
        print(f"wrote {path}")
        print(said if ok else f"warning: {said}; edit backend: in {path}")
    if not ok:
        raise typer.Exit(FAILED)


def anchor_from_config(config: Path, json_output: bool) -> None:
    """`caucus anchor --config`: anchor the config's ledger, then run its anchor_command."""
    from caucus.deliberation.config import ConfigError, load
    from caucus.deliberation.run import AnchorCommandError, anchor_and_run

    err = Console(stderr=True, soft_wrap=True)
    try:
        entry, output = anchor_and_run(load(config))
    except ConfigError as exc:
        err.print(str(exc), style="red", markup=False, highlight=False)
        raise typer.Exit(2) from None
    except (CaucusError, AnchorCommandError) as exc:
        err.print(str(exc), style="red", markup=False, highlight=False)
        raise typer.Exit(1) from None
    if json_output:
        print(json.dumps(entry | {"anchor_command_output": output}))
        return
    print(f"anchored {entry['count']} records (head {entry['head_hash'][:12]})")
    if output is not None:
        print("anchor_command ran" + (f": {output.strip()}" if output.strip() else ""))
