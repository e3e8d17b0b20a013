"""`caucus verify` and `caucus anchor`: the spec's exit codes and messages, plus `--json`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caucus.errors import CaucusError
from caucus.ledger.verify import Break, Report, verify_chain

INTACT, TAMPERED, USAGE = 0, 1, 2


@dataclass(frozen=True)
class Outcome:
    code: int
    message: str
    data: dict[str, Any]


def _read_anchors(anchors: Path) -> list[tuple[int, str]] | str:
    try:
        lines = anchors.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read the anchor file {anchors}: {exc}"
    found: list[tuple[int, str]] = []
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            entry = json.loads(text)
            count, head = entry["count"], entry["head_hash"]
        except (ValueError, TypeError, KeyError):
            return f"{anchors} line {number} is not an anchor {{anchored_at, count, head_hash}}"
        if (
            not isinstance(count, int)
            or isinstance(count, bool)
            or count < 0
            or not isinstance(head, str)
        ):
            return f"{anchors} line {number} is not an anchor {{anchored_at, count, head_hash}}"
        found.append((count, head))
    return found


def _anchor_break(anchors: list[tuple[int, str]], hashes: list[str]) -> Break | None:
    for count, head in anchors:
        if count == 0:
            continue
        if count > len(hashes):
            return Break(len(hashes), "anchored record missing (possible truncation)")
        if hashes[count - 1] != head:
            return Break(count - 1, "anchor mismatch")
    return None


def verify(path: Path, anchors: Path | None = None, key: Path | None = None) -> Outcome:
    anchor_list: list[tuple[int, str]] = []
    if anchors is not None:
        read = _read_anchors(anchors)
        if isinstance(read, str):
            return Outcome(USAGE, read, {"error": "unreadable_anchors", "message": read})
        anchor_list = read
    public = None
    if key is not None:
        from caucus.ledger.signing import load_public_key

        try:
            public = load_public_key(key)
        except (OSError, ValueError, CaucusError) as exc:
            message = f"cannot read the key {key}: {exc}"
            return Outcome(USAGE, message, {"error": "unreadable_key", "message": message})
    if path.is_dir():
        message = f"{path} is a directory; pass the ledger file (decisions.jsonl)"
        return Outcome(USAGE, message, {"error": "usage", "message": message})
    report, hashes = verify_chain(path)
    broken = report.broken
    if broken is None and anchor_list:
        broken = _anchor_break(anchor_list, hashes)
        if broken is not None:
            report = Report(broken.index, report.head_hash, report.anchored, broken)
    signed = 0
    if broken is None and public is not None:
        from caucus.ledger.signing import check_signed

        check = check_signed(path, public, hashes)
        broken, signed = check.broken, check.checked
        if broken is not None:
            report = Report(broken.index, report.head_hash, report.anchored, broken)
    outcome = _outcome(path, report, broken, len(anchor_list))
    if signed:
        outcome.data["signed_checkpoints"] = signed
        return Outcome(
            outcome.code, outcome.message + f"; {signed} signed checkpoints valid", outcome.data
        )
    return outcome


def _outcome(path: Path, report: Report, broken: Break | None, anchors: int) -> Outcome:
    data: dict[str, Any] = {"path": str(path), "records": report.count, "anchored": report.anchored}
    if broken is not None:
        data |= {"intact": False, "index": broken.index, "reason": broken.reason}
        verified = f"({report.count} records verified before the break)"
        message = f"record {broken.index}: {broken.reason} {verified}"
        return Outcome(TAMPERED, message, data)
    data |= {"intact": True, "head_hash": report.head_hash, "anchors_checked": anchors}
    if report.anchored:
        message = f"intact: {report.count} records, anchored by the head checkpoint"
    else:
        message = (
            f"intact but UNANCHORED: {report.count} records and no head checkpoint, "
            "so deleting records from the tail would go unnoticed"
        )
    if anchors:
        message += f"; {anchors} external anchors match"
    return Outcome(INTACT, message, data)
