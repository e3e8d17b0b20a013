"""Verifying a ledger: the spec's checks, in the spec's order, stopping at the first break.

Reasons are the spec's exact strings; another verifier of the format reports the same index and
reason for the same file, so they are part of the interface and must not be reworded.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import re
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime
from hashlib import sha256
from pathlib import Path
from typing import Any

from caucus.ledger import deep
from caucus.ledger.canonical import GENESIS, encode, record_hash

REQUIRED = (
    "schema_version",
    "timestamp",
    "subject",
    "positions",
    "decision",
    "dissent",
    "confidence",
    "evidence",
    "prev_hash",
    "hash",
)
SAFE_INTEGER = 2**53
HEX64 = re.compile(r"[0-9a-f]{64}")
# Below this a second process costs more to start than it saves.
PARALLEL_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class Break:
    index: int
    reason: str


@dataclass(frozen=True)
class Report:
    count: int  # records verified before the break (all of them when intact)
    head_hash: str
    anchored: bool
    broken: Break | None = None

    @property
    def intact(self) -> bool:
        return self.broken is None


class _Duplicate(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Duplicate
    return result


# Exact types, not isinstance: parsed JSON holds nothing else, and a bool is not a number here.
_NUMBER_TYPES = (int, float)


def _unit(value: object) -> bool:
    return type(value) in _NUMBER_TYPES and 0 <= value <= 1  # type: ignore[operator]


def _position(entry: object) -> bool:
    if type(entry) is not dict:
        return False
    confidence = entry.get("confidence")
    return (
        type(entry.get("agent")) is str
        and type(entry.get("stance")) is str
        and type(entry.get("summary")) is str
        and type(confidence) in _NUMBER_TYPES
        and 0 <= confidence <= 1  # type: ignore[operator]
    )


def _evidence(entry: object) -> bool:
    return (
        type(entry) is dict and type(entry.get("source")) is str and type(entry.get("ref")) is str
    )


def _lone_surrogate(record: dict[str, Any]) -> bool:
    """Any lone surrogate in a key or string, walked without recursion."""
    stack: list[object] = [record]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and any("\ud800" <= ch <= "\udfff" for ch in value):
            return True
    return False


class _Decoder:
    """One JSON decoder per verification, noting numeric violations as the C scanner meets them.

    Number hooks on the scanner cost almost nothing, where walking every parsed record again
    would cost more than the rest of verification together.
    """

    def __init__(self) -> None:
        self.numeric: str | None = None
        self._decoder = json.JSONDecoder(
            object_pairs_hook=_pairs,
            parse_float=self._float,
            parse_int=self._int,
            parse_constant=self._constant,
        )
        self._hooks = deep.Hooks(_pairs, self._float, self._int, self._constant)

    def _float(self, text: str) -> float:
        value = float(text)
        if value in (math.inf, -math.inf) and self.numeric is None:
            self.numeric = "non-finite number"
        return value

    def _int(self, text: str) -> int:
        value = int(text)
        if not -SAFE_INTEGER <= value <= SAFE_INTEGER and self.numeric is None:
            self.numeric = "unsafe integer"
        return value

    def _constant(self, name: str) -> float:
        if self.numeric is None:
            self.numeric = "non-finite number"
        return float(name)

    def decode(self, text: str) -> Any:
        self.numeric = None
        try:
            return self._decoder.decode(text)
        except RecursionError:
            self.numeric = None
            return deep.loads(text, self._hooks)


def _timestamp(value: str) -> str | None:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return "invalid timestamp"
    offset = moment.utcoffset()
    if offset is None or offset.total_seconds() != 0:
        return "timestamp not UTC"
    return None


def check_record(
    record: dict[str, Any], *, numeric: str | bool | None = True, surrogates: bool = True
) -> str | None:
    """Steps 2 and 3 of verification: the first violated constraint of one parsed record.

    `numeric` is what the decoder noticed (a reason or None), or True to walk the record for
    it; `surrogates=False` skips the walk when the line's text holds no surrogate escape at all
    (raw surrogates cannot survive UTF-8 decoding).
    """
    version = record["schema_version"]
    if version not in ("0.1", "0.2"):
        return "unsupported schema version"
    if not isinstance(record["subject"], str):
        return "invalid subject type"
    if not isinstance(record["decision"], str):
        return "invalid decision type"
    if not isinstance(record["timestamp"], str):
        return "invalid timestamp type"
    for field in ("positions", "dissent", "evidence"):
        if not isinstance(record[field], list):
            return f"invalid {field} structure"
    for field in ("positions", "dissent"):
        if not all(_position(entry) for entry in record[field]):
            return f"invalid {field} entry"
    if not all(_evidence(entry) for entry in record["evidence"]):
        return "invalid evidence entry"
    if not _unit(record["confidence"]):
        return "invalid confidence"
    if not isinstance(record["hash"], str) or not HEX64.fullmatch(record["hash"]):
        return "invalid hash format"
    if not isinstance(record["prev_hash"], str) or not HEX64.fullmatch(record["prev_hash"]):
        return "invalid prev_hash format"
    stamp = _timestamp(record["timestamp"])
    if stamp:
        return stamp
    if version == "0.2" and "rounds" not in record:
        return "schema 0.2 requires rounds"
    if version == "0.1" and "rounds" in record:
        return "rounds not allowed in schema 0.1"
    if "rounds" in record:
        rounds = record["rounds"]
        if not isinstance(rounds, list) or not all(isinstance(r, list) for r in rounds):
            return "invalid rounds structure"
        if not all(_position(entry) for r in rounds for entry in r):
            return "invalid rounds entry"
    if surrogates and _lone_surrogate(record):
        return "lone surrogate in string"
    if numeric is True:
        return _numeric_walk(record)
    return numeric or None


def _numeric_walk(record: dict[str, Any]) -> str | None:
    stack: list[object] = [record]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, float) and not math.isfinite(value):
            return "non-finite number"
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > SAFE_INTEGER:
            return "unsafe integer"
    return None


SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def parse_line(raw: bytes, decoder: _Decoder | None = None) -> dict[str, Any] | str:
    """Step 1: the record, or the reason it is not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid encoding"
    try:
        record = (decoder or _Decoder()).decode(text)
    except _Duplicate:
        return "duplicate key"
    except ValueError:
        return "malformed record"
    if not isinstance(record, dict) or any(field not in record for field in REQUIRED):
        return "malformed record"
    return record


def head_path(path: Path) -> Path:
    return path.with_name(path.name + ".head")


def read_checkpoint(path: Path) -> tuple[int, str] | str | None:
    """The head checkpoint, None when there is none, or the reason it is unusable."""
    try:
        raw = head_path(path).read_bytes()
    except FileNotFoundError:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return "malformed head checkpoint"
    count = data.get("count") if isinstance(data, dict) else None
    head = data.get("head_hash") if isinstance(data, dict) else None
    if (
        not isinstance(count, int)
        or isinstance(count, bool)
        or count < 0
        or not isinstance(head, str)
    ):
        return "malformed head checkpoint"
    return count, head


@dataclass(frozen=True)
class _Scanned:
    """One stretch of lines: each record's (prev_hash, hash, content hash matches), in order,
    and the step 1-3 reason of the record after them, if one failed."""

    links: list[tuple[str, str, bool]]
    stop: str | None


_REQUIRED = frozenset(REQUIRED)


def _safe_int(text: str) -> int:
    value = int(text)
    if not -SAFE_INTEGER <= value <= SAFE_INTEGER:
        raise ValueError("unsafe integer")  # the full check names it
    return value


def plain_decoder() -> Any:
    """The fast path's parser: C all the way but for integers, which records rarely hold."""
    return json.JSONDecoder(parse_int=_safe_int).decode


def _fast_link(raw: bytes, decode: Any) -> tuple[str, str, bool] | None:
    """The chain link of a line written in canonical form by a well-behaved writer, checked
    with the plain C parser and no per-value hooks; None sends the line to the full check.

    It is only trusted when nothing could differ: the text, less its `hash` member, must be
    exactly the canonical form of what it parsed to, which rules out duplicate keys (the
    parsed object keeps one of them) and any non-canonical spelling; non-finite numbers fail
    the encoder, and unsafe integers the parser.
    """
    try:
        text = raw.decode("utf-8")
        record = decode(text)
    except (ValueError, RecursionError):
        return None
    if type(record) is not dict or not record.keys() >= _REQUIRED:
        return None
    # Canonical text escapes in lowercase; any other spelling fails the comparison below.
    surrogates = b"\\ud" in raw and SURROGATE_ESCAPE.search(raw) is not None
    if check_record(record, numeric=None, surrogates=surrogates):
        return None
    digest = record.pop("hash")
    try:
        body = encode(record)
    except (ValueError, RecursionError):
        return None
    member = '"hash":"' + digest + '"'
    at = text.find(member)
    if at <= 0:
        return None
    end = at + len(member)
    if text[at - 1] == ",":
        stripped = text[: at - 1] + text[end:]
    elif text[end : end + 1] == ",":
        stripped = text[:at] + text[end + 1 :]
    else:
        stripped = text[:at] + text[end:]
    if stripped != body:
        return None
    return record["prev_hash"], digest, sha256(body.encode("ascii")).hexdigest() == digest


def _scan(data: bytes) -> _Scanned:
    decoder = _Decoder()
    plain = plain_decoder()
    links: list[tuple[str, str, bool]] = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        link = _fast_link(raw, plain)
        if link is not None:
            links.append(link)
            continue
        parsed = parse_line(raw, decoder)
        if isinstance(parsed, str):
            return _Scanned(links, parsed)
        surrogates = SURROGATE_ESCAPE.search(raw) is not None
        reason = check_record(parsed, numeric=decoder.numeric, surrogates=surrogates)
        if reason is not None:
            return _Scanned(links, reason)
        links.append((parsed["prev_hash"], parsed["hash"], record_hash(parsed) == parsed["hash"]))
    return _Scanned(links, None)


def _scan_range(path: str, start: int, end: int) -> _Scanned:
    """The helper process's half: read exactly the bytes the caller read, even if appended to."""
    with open(path, "rb") as handle:
        handle.seek(start)
        return _scan(handle.read(end - start))


def _scan_parallel(path: Path, data: bytes) -> list[_Scanned]:
    """Both halves at once: parsing and hashing is CPU-bound Python, so a second process is
    what gets 100,000 records under 2 s on two cores. Any trouble with the helper process
    falls back to scanning the second half here."""
    middle = data.find(b"\n", len(data) // 2) + 1
    if middle == 0:
        return [_scan(data)]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        second = pool.submit(_scan_range, str(path), middle, len(data))
        first = _scan(data[:middle])
        if first.stop is not None:
            second.cancel()
            return [first]
        try:
            return [first, second.result()]
        except (BrokenProcessPool, OSError):
            return [first, _scan(data[middle:])]


def verify_chain(path: Path, *, parallel_from: int = PARALLEL_BYTES) -> tuple[Report, list[str]]:
    """Verify the ledger at `path`; also return every record's hash, for anchors.

    Ledgers of `parallel_from` bytes or more are scanned in two processes; the chain links are
    then checked in order here, so the first break reported is the same either way.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    parts = _scan_parallel(path, data) if len(data) >= parallel_from > 0 else [_scan(data)]
    hashes: list[str] = []
    prev = GENESIS
    for part in parts:
        for prev_hash, record_head, content_ok in part.links:
            index = len(hashes)
            reason = None
            if prev_hash != prev:
                reason = "broken chain link"
            elif not content_ok:
                reason = "content hash mismatch"
            if reason is not None:
                return Report(index, prev, False, Break(index, reason)), hashes
            prev = record_head
            hashes.append(prev)
        if part.stop is not None:
            count = len(hashes)
            return Report(count, prev, False, Break(count, part.stop)), hashes
    count = len(hashes)
    checkpoint = read_checkpoint(path)
    if isinstance(checkpoint, str):
        return Report(count, prev, False, Break(count, checkpoint)), hashes
    if checkpoint is not None and checkpoint != (count, prev):
        reason = "head checkpoint mismatch (possible truncation)"
        return Report(count, prev, False, Break(count, reason)), hashes
    return Report(count, prev, checkpoint is not None), hashes
