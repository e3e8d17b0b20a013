"""Memory and reflection: what happened after a decision, how well the panel's confidence
predicted it, and a short note that later deliberations read as evidence.

An outcome scores a decision: 1 it held, 0 it failed, 0.5 mixed. The chair said its decision
was right with its confidence c, so its Brier score is (c - o)²; an analyst whose stance was
the verdict's said so with its confidence, and one who dissented said the opposite, so its
forecast is c or 1 - c. Lower is better; 0.25 is what always saying 50% earns.

Notes live in a Markdown file, one `## YYYY-MM-DD` section per reflection. A note weighs
0.5^(age / half-life); deliberations read the heaviest few, so old lessons fade rather than
steer forever.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from caucus.files import private_dir

RESULTS = {"held": 1.0, "failed": 0.0, "mixed": 0.5}
MIN_WEIGHT = 0.1
NOTES_READ = 3


@dataclass(frozen=True, slots=True)
class Score:
    who: str
    brier: float
    decisions: int
    mean_confidence: float


def forecasts(record: Mapping[str, Any]) -> list[tuple[str, float]]:
    """Who forecast the decision would hold, and with what probability."""
    verdict = record.get("stance")
    out: list[tuple[str, float]] = [("chair", float(record["confidence"]))]
    for p in record.get("positions", []):
        c = float(p["confidence"])
        agrees = verdict is None or p["stance"] == verdict
        out.append((str(p["agent"]), c if agrees else 1.0 - c))
    return out


def scores(records: Iterable[Mapping[str, Any]], outcomes: Mapping[str, float]) -> list[Score]:
    """Brier scores for the chair and each panel member over the decisions with outcomes."""
    sums: dict[str, list[float]] = defaultdict(list)
    stated: dict[str, list[float]] = defaultdict(list)
    for record in records:
        result = outcomes.get(str(record.get("hash")))
        if result is None:
            continue
        for who, p in forecasts(record):
            sums[who].append((p - result) ** 2)
            stated[who].append(p)
    return sorted(
        (Score(who, sum(v) / len(v), len(v), sum(stated[who]) / len(v)) for who, v in sums.items()),
        key=lambda s: (s.who != "chair", s.who),
    )


def lesson(found: list[Score]) -> str:
    """A few lines a later panel can use."""
    lines = []
    for s in found:
        mean = round(s.mean_confidence * 100)
        if s.brier <= 0.1:
            verdict = "well calibrated"
        elif s.brier <= 0.25:
            verdict = "roughly calibrated"
        else:
            verdict = "poorly calibrated: weigh its confidence less"
        lines.append(
            f"- {s.who}: Brier {s.brier:.3f} over {s.decisions} decision(s), stated {mean}% on "
            f"average — {verdict}"
        )
    return "\n".join(lines)


def append_note(path: Path, day: date, text: str) -> None:
    private_dir(path.parent)
    existing = (
        path.read_text(encoding="utf-8") if path.exists() else "# What past decisions taught\n"
    )
    path.write_text(existing.rstrip("\n") + f"\n\n## {day.isoformat()}\n\n{text}\n", "utf-8")


_SECTION = re.compile(r"^## (\d{4}-\d{2}-\d{2})\s*$", re.M)


def notes(path: Path, today: date, half_life_days: float) -> list[dict[str, Any]]:
    """The heaviest notes still worth reading, as evidence items (newest first among equals)."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    found: list[dict[str, Any]] = []
    marks = list(_SECTION.finditer(text))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[mark.end() : end].strip()
        try:
            day = date.fromisoformat(mark.group(1))
        except ValueError:
            continue
        age = max((today - day).days, 0)
        weight = 0.5 ** (age / half_life_days)
        if body and weight >= MIN_WEIGHT:
            found.append(
                {
                    "source": "memory",
                    "ref": f"{path.name}#{day.isoformat()}",
                    "weight": round(weight, 3),
                    "note": body,
                }
            )
    found.sort(key=lambda n: (-n["weight"], n["ref"]))
    return found[:NOTES_READ]


def read_records(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


def find_record(records: list[dict[str, Any]], which: str) -> dict[str, Any]:
    """A record by its index or a prefix of its hash (at least 6 hex digits)."""
    if which.isdigit() and len(which) < 6:
        index = int(which)
        if index < len(records):
            return records[index]
        raise LookupError(f"the ledger has {len(records)} records; there is no record {index}")
    matches = [r for r in records if str(r.get("hash", "")).startswith(which.lower())]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise LookupError(f"no record's hash starts with {which!r}")
    raise LookupError(f"{len(matches)} records' hashes start with {which!r}; give more digits")
