"""`caucus briefing`: every agenda subject deliberated and recorded, intent updates proposed
(never applied here), the result written as briefing.md and briefing.json, and sent.

Proposals are the chair model's, read from one JSON answer and checked against the intents
they name: a proposal for an intent that does not exist, or a change an intent cannot take,
is dropped and the briefing says so. Nothing changes until `caucus intents apply` and a
person's yes to each.
"""

from __future__ import annotations

import json
import os
import shlex
import smtplib
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from caucus.deliberation.config import NotifyConfig
from caucus.deliberation.engine import ATTEMPTS, OnStep, Step
from caucus.deliberation.extract import Malformed, last_object
from caucus.deliberation.fencing import DATA_NOTE, fence
from caucus.deliberation.intents import Intent, IntentError, changed
from caucus.deliberation.run import Recorded
from caucus.deliberation.setup import Backend
from caucus.files import private_dir


@dataclass(slots=True)
class Proposal:
    intent: str
    changes: dict[str, Any]
    reason: str

    def wire(self) -> dict[str, Any]:
        return {"intent": self.intent, "changes": self.changes, "reason": self.reason}


@dataclass(slots=True)
class Briefing:
    day: date
    decided: list[Recorded]
    proposals: list[Proposal]
    dropped: list[str] = field(default_factory=list)

    def wire(self) -> dict[str, Any]:
        return {
            "date": self.day.isoformat(),
            "decisions": [
                {
                    "subject": d.outcome.subject,
                    "decision": d.outcome.verdict.decision,
                    "stance": d.outcome.verdict.stance,
                    "confidence": d.outcome.verdict.confidence,
                    "dissent": [
                        {"agent": p.agent, "summary": p.summary} for p in d.outcome.dissent
                    ],
                    "log": str(d.log),
                    "index": d.index,
                    "hash": d.record["hash"],
                }
                for d in self.decided
            ],
            "proposals": [p.wire() for p in self.proposals],
            "dropped": self.dropped,
        }

    def markdown(self) -> str:
        out = [f"# Briefing {self.day.isoformat()}", ""]
        for d in self.decided:
            v = d.outcome.verdict
            out += [
                f"## {d.outcome.subject}",
                "",
                f"**Decision** ({round(v.confidence * 100)}% confidence): {v.decision}",
                "",
            ]
            out += [f"- Dissent [{p.agent}]: {p.summary}" for p in d.outcome.dissent]
            out += [f"- On the record: record {d.index}, hash `{d.record['hash'][:12]}`", ""]
        out += ["## Proposed intent updates", ""]
        if not self.proposals:
            out.append("None.")
        for p in self.proposals:
            changes = ", ".join(f"{k} → {v}" for k, v in p.changes.items())
            out.append(f"- **{p.intent}**: {changes}. {p.reason}")
        if self.dropped:
            out += ["", "Proposals dropped:", *[f"- {d}" for d in self.dropped]]
        out += ["", "Apply them with `caucus intents apply`, which asks for each.", ""]
        return "\n".join(out)


def proposal_prompt(decided: Sequence[Recorded], intents: Sequence[Intent], today: date) -> str:
    parts = [
        "You keep a list of standing intents. Given today's decisions, propose updates to the "
        "intents the decisions bear on, each with its reason. Propose nothing that the "
        "decisions do not support.",
        DATA_NOTE,
        *(
            fence(
                f"Decision {i + 1}:",
                json.dumps(
                    {"subject": d.outcome.subject, "decision": d.outcome.verdict.decision},
                    ensure_ascii=False,
                ),
            )
            for i, d in enumerate(decided)
        ),
        *(
            fence(f"Intent {i.name!r}:", json.dumps(i.evidence(today), ensure_ascii=False))
            for i in intents
        ),
        'Answer with one JSON object: {"proposals": [{"intent": "name", "changes": {field: '
        'value}, "reason": "why"}]}; fields are direction, target, pacing, cadence_days, '
        "last_acted, status (open, paused, done) and paused_until (YYYY-MM-DD, which pauses "
        "the intent until then).",
    ]
    return "\n\n".join(parts)


async def propose(
    backend: Backend,
    decided: Sequence[Recorded],
    intents: Sequence[Intent],
    today: date,
    on_step: OnStep,
) -> tuple[list[Proposal], list[str]]:
    if not intents or not decided:
        return [], []
    prompt = proposal_prompt(decided, intents, today)
    answer: dict[str, Any] | None = None
    for attempt in range(1, ATTEMPTS + 1):
        try:
            answer = last_object(await backend.completer.complete(prompt))
            if isinstance(answer.get("proposals"), list):
                break
            answer = None
        except Malformed as exc:
            if attempt < ATTEMPTS:
                on_step(Step("retrying", "proposals", 0, str(exc)))
    if answer is None:
        return [], ["the model's proposals were unusable twice; none are offered"]
    known = {i.name: i for i in intents}
    kept: list[Proposal] = []
    dropped: list[str] = []
    for item in answer["proposals"]:
        if not isinstance(item, dict):
            dropped.append("a proposal that is not an object")
            continue
        name, changes = item.get("intent"), item.get("changes")
        reason = str(item.get("reason") or "").strip()
        if name not in known:
            dropped.append(f"{name!r}: no such intent")
            continue
        if not isinstance(changes, dict) or not changes:
            dropped.append(f"{name}: no changes")
            continue
        try:
            changed(known[name], changes)
        except IntentError as exc:
            dropped.append(f"{name}: {exc}")
            continue
        kept.append(Proposal(str(name), dict(changes), reason or "(no reason given)"))
    return kept, dropped


def write(briefing: Briefing, directory: Path) -> tuple[Path, Path]:
    private_dir(directory)
    md, js = directory / "briefing.md", directory / "briefing.json"
    md.write_text(briefing.markdown(), "utf-8")
    js.write_text(json.dumps(briefing.wire(), indent=2, ensure_ascii=False) + "\n", "utf-8")
    return md, js


class NotifyError(Exception):
    pass


def _fill(template: str, briefing: Briefing, text: str) -> str:
    return (
        template.replace("{count}", str(len(briefing.decided)))
        .replace("{date}", briefing.day.isoformat())
        .replace("{briefing}", text)
    )


def notify(config: NotifyConfig, briefing: Briefing) -> list[str]:
    """Send the briefing as configured; returns what was done, raises NotifyError."""
    done: list[str] = []
    text = briefing.markdown()
    if config.email is not None:
        mail = config.email
        message = EmailMessage()
        message["From"] = mail.sender
        message["To"] = ", ".join(mail.to)
        message["Subject"] = _fill(mail.subject, briefing, "")
        message.set_content(_fill(mail.body, briefing, text))
        try:
            with smtplib.SMTP(mail.host, mail.port, timeout=30) as smtp:
                if mail.starttls:
                    smtp.starttls()
                if mail.username:
                    password = os.environ.get(mail.password_env or "", "")
                    smtp.login(mail.username, password)
                smtp.send_message(message)
        except (OSError, smtplib.SMTPException) as exc:
            raise NotifyError(
                f"the briefing was not emailed ({mail.host}:{mail.port}): {exc}"
            ) from None
        done.append(f"emailed {', '.join(mail.to)}")
    if config.command is not None:
        c = config.command
        argv = shlex.split(c) if isinstance(c, str) else list(c)
        try:
            ran = subprocess.run(  # noqa: S603 (the operator's configured command)
                argv, input=text, text=True, capture_output=True, timeout=120, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise NotifyError(f"the notify command did not run: {exc}") from None
        if ran.returncode != 0:
            raise NotifyError(
                f"the notify command exited with {ran.returncode}: {ran.stderr.strip()[-300:]}"
            )
        done.append(f"ran {argv[0]}")
    return done
