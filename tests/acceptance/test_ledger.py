"""Tamper evidence on a 10,000-record ledger, through `caucus verify` as an operator runs it."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from caucus.errors import LedgerIntegrityError
from caucus.ledger.chain import anchor, anchors_path, append, append_many
from caucus.ledger.signing import signed_path
from caucus.ledger.verify import head_path, verify_chain
from tests.waiting import eventually_sync

pytestmark = pytest.mark.slow
RECORDS = 10_000


def decision(n: int) -> dict[str, object]:
    return {
        "schema_version": "0.1",
        "timestamp": "2026-11-30T00:00:00+00:00",
        "subject": f"question {n} — é",
        "positions": [{"agent": "a1", "stance": "yes", "summary": "ok", "confidence": 0.75}],
        "decision": "yes",
        "dissent": [],
        "confidence": 0.8,
        "evidence": [{"source": "form", "ref": f"f{n}"}],
    }


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pristine") / "decisions.jsonl"
    append_many(path, (decision(n) for n in range(RECORDS)))
    return path


@pytest.fixture
def ledger(pristine: Path, tmp_path: Path) -> Path:
    path = tmp_path / "decisions.jsonl"
    shutil.copy(pristine, path)
    shutil.copy(head_path(pristine), head_path(path))
    return path


def verify(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "caucus", "verify", str(path), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_an_untouched_ledger_is_intact_and_anchored(ledger: Path) -> None:
    result = verify(ledger)
    assert result.returncode == 0, result.stderr
    assert f"intact: {RECORDS} records, anchored" in result.stdout
    data = json.loads(verify(ledger, "--json").stdout)
    assert data["intact"] is True
    assert data["records"] == RECORDS


def test_one_flipped_byte_names_the_record(ledger: Path) -> None:
    data = bytearray(ledger.read_bytes())
    start = sum(len(raw) for raw in lines(ledger)[:5000])
    offset = data.index(b"question", start) + 1
    data[offset] ^= 0x01
    ledger.write_bytes(bytes(data))
    result = verify(ledger)
    assert result.returncode == 1
    assert (
        "record 5000: content hash mismatch (5000 records verified before the break)"
        in result.stderr
    )


def test_a_deleted_interior_record_breaks_the_chain_there(ledger: Path) -> None:
    kept = lines(ledger)
    del kept[4321]
    ledger.write_bytes(b"".join(kept))
    result = verify(ledger)
    assert result.returncode == 1
    assert "record 4321: broken chain link" in result.stderr


def test_two_swapped_records_break_the_chain_at_the_first(ledger: Path) -> None:
    kept = lines(ledger)
    kept[700], kept[701] = kept[701], kept[700]
    ledger.write_bytes(b"".join(kept))
    result = verify(ledger)
    assert result.returncode == 1
    assert "record 700: broken chain link" in result.stderr


def test_a_truncated_tail_is_caught_by_the_checkpoint(ledger: Path) -> None:
    ledger.write_bytes(b"".join(lines(ledger)[:-25]))
    result = verify(ledger)
    assert result.returncode == 1
    assert f"record {RECORDS - 25}: head checkpoint mismatch (possible truncation)" in result.stderr


def test_without_a_checkpoint_truncation_is_reported_as_unanchored(ledger: Path) -> None:
    ledger.write_bytes(b"".join(lines(ledger)[:-25]))
    head_path(ledger).unlink()
    result = verify(ledger)
    assert result.returncode == 0
    assert "UNANCHORED" in result.stdout
    assert "go unnoticed" in result.stdout


def test_external_anchors_catch_a_truncation_with_a_rewritten_checkpoint(ledger: Path) -> None:
    anchor(ledger)
    copied = ledger.parent / "anchors-offsite.jsonl"
    shutil.copy(anchors_path(ledger), copied)
    kept = lines(ledger)[:-10]
    ledger.write_bytes(b"".join(kept))
    last = json.loads(kept[-1])
    head_path(ledger).write_text(json.dumps({"count": len(kept), "head_hash": last["hash"]}))
    assert verify(ledger).returncode == 0  # the forger's checkpoint agrees with the forged chain
    result = verify(ledger, "--anchors", str(copied))
    assert result.returncode == 1
    assert f"record {RECORDS - 10}: anchored record missing (possible truncation)" in result.stderr


def test_a_malformed_checkpoint_and_an_unreadable_anchor_file(ledger: Path) -> None:
    head_path(ledger).write_text("{not json")
    result = verify(ledger)
    assert result.returncode == 1
    assert "malformed head checkpoint" in result.stderr
    missing = verify(ledger, "--anchors", str(ledger.parent / "nope.jsonl"))
    assert missing.returncode == 2
    assert "cannot read the anchor file" in missing.stderr


def test_a_ledger_that_is_not_there_is_said_to_be_missing(tmp_path: Path) -> None:
    # Not "intact with 0 records": a mistyped path must not pass for a verified ledger.
    result = verify(tmp_path / "none.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert "no ledger at" in result.stderr


def test_writers_refuse_to_append_to_a_tampered_ledger(ledger: Path) -> None:
    kept = lines(ledger)
    del kept[10]
    ledger.write_bytes(b"".join(kept))
    with pytest.raises(LedgerIntegrityError, match="record 10: broken chain link"):
        append(ledger, decision(-1))


CHILD = """
import sys
from pathlib import Path
from caucus.ledger.chain import append
from tests.acceptance.test_ledger import decision
path = Path(sys.argv[1])
n = 0
while True:
    append(path, decision(n))
    n += 1
    if n == 20:
        print("ready", flush=True)
"""


def test_kill_9_during_appends_leaves_a_ledger_that_verifies_or_names_its_torn_tail(
    tmp_path: Path,
) -> None:
    path = tmp_path / "decisions.jsonl"
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE
    ) as child:
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        # Killed while it keeps appending: some records past the first twenty are in.
        eventually_sync(lambda: path.read_bytes().count(b"\n") >= 40, what="more appends")
        child.send_signal(signal.SIGKILL)
        child.wait()
    before = path.read_bytes()
    result = verify(path, "--json")
    assert path.read_bytes() == before  # verification never repairs
    data = json.loads(result.stdout)
    if result.returncode == 0:
        assert data["records"] >= 20
        return
    assert result.returncode == 1
    assert data["index"] >= 20
    assert data["reason"] in {"malformed record", "head checkpoint mismatch (possible truncation)"}


def test_a_torn_last_line_is_reported_with_its_index_and_blocks_appends(ledger: Path) -> None:
    whole = lines(ledger)
    torn = whole[-1][: len(whole[-1]) // 2]
    ledger.write_bytes(b"".join(whole[:-1]) + torn)
    result = verify(ledger)
    assert result.returncode == 1
    assert f"record {RECORDS - 1}: malformed record" in result.stderr
    with pytest.raises(LedgerIntegrityError):
        append(ledger, decision(-1))
    assert ledger.read_bytes().endswith(torn)


@pytest.mark.parametrize("where", [3000, 7000])
def test_the_two_process_scan_reports_the_same_first_break(ledger: Path, where: int) -> None:
    intact, _ = verify_chain(ledger, parallel_from=1)
    assert intact.intact
    assert intact.count == RECORDS
    kept = lines(ledger)
    kept[where] = kept[where].replace(b'"decision":"yes"', b'"decision":"no"')
    del kept[where + 500]
    ledger.write_bytes(b"".join(kept))
    serial, _ = verify_chain(ledger, parallel_from=0)
    parallel, hashes = verify_chain(ledger, parallel_from=1)
    assert serial.broken is not None
    assert (serial.broken.index, serial.broken.reason) == (where, "content hash mismatch")
    assert parallel == serial
    assert len(hashes) == where


def anchor_cli(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "caucus", "anchor", str(path), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_a_whole_chain_rewrite_is_caught_by_a_signed_checkpoint(
    ledger: Path, tmp_path: Path
) -> None:
    key = tmp_path / "keys" / "ledger.key"
    signed = anchor_cli(ledger, "--key", str(key))
    assert signed.returncode == 0, signed.stderr
    assert "created the signing key" in signed.stdout
    assert key.stat().st_mode & 0o077 == 0
    public = key.with_name("ledger.key.pub")
    ok = verify(ledger, "--key", str(public))
    assert ok.returncode == 0, ok.stderr
    assert "1 signed checkpoints valid" in ok.stdout

    # The forger rewrites record 12 and re-chains everything after it, checkpoint included.
    forged = tmp_path / "forged.jsonl"
    originals = [json.loads(raw) for raw in lines(ledger)]
    originals[12]["decision"] = "no"
    append_many(forged, originals)
    ledger.write_bytes(forged.read_bytes())
    shutil.copy(head_path(forged), head_path(ledger))
    assert verify(ledger).returncode == 0  # the chain alone cannot tell
    caught = verify(ledger, "--key", str(public))
    assert caught.returncode == 1
    assert f"record {RECORDS - 1}: signed checkpoint mismatch (chain rewritten)" in caught.stderr

    # Re-signing needs the private key: a forger who drops the signatures and signs with a key
    # of their own is caught too.
    signed_path(ledger).unlink()
    other = tmp_path / "other" / "forger.key"
    assert anchor_cli(ledger, "--key", str(other)).returncode == 0
    again = verify(ledger, "--key", str(public))
    assert again.returncode == 1
    assert "invalid checkpoint signature" in again.stderr


def test_the_key_must_live_outside_the_ledger_directory(ledger: Path) -> None:
    refused = anchor_cli(ledger, "--key", str(ledger.parent / "ledger.key"))
    assert refused.returncode == 1
    assert "keep it elsewhere" in refused.stderr
    missing = verify(ledger, "--key", str(ledger.parent / "absent.pub"))
    assert missing.returncode == 2


def test_verify_with_a_key_but_no_signed_checkpoint_fails(ledger: Path, tmp_path: Path) -> None:
    key = tmp_path / "keys" / "ledger.key"
    assert anchor_cli(ledger, "--key", str(key)).returncode == 0
    signed_path(ledger).unlink()
    result = verify(ledger, "--key", str(key))  # the private key file works as well
    assert result.returncode == 1
    assert f"record {RECORDS}: no signed checkpoint" in result.stderr


def test_a_checkpoint_left_behind_by_a_dead_writer_is_accepted_only_on_request(
    ledger: Path,
) -> None:
    # The crash window: three records fsynced, the checkpoint not yet moved past them.
    kept = lines(ledger)[: RECORDS - 3]
    behind = json.loads(kept[-1])
    head_path(ledger).write_text(json.dumps({"count": len(kept), "head_hash": behind["hash"]}))
    assert verify(ledger).returncode == 1
    with pytest.raises(LedgerIntegrityError):
        append(ledger, decision(-1))  # writers still refuse
    plain = anchor_cli(ledger)
    assert plain.returncode == 1  # nothing is accepted unless asked
    accepted = anchor_cli(ledger, "--accept-tail")
    assert accepted.returncode == 0, accepted.stderr
    assert f"accepted 3 records written past the checkpoint (it said {RECORDS - 3}" in (
        accepted.stdout
    )
    result = verify(ledger)
    assert result.returncode == 0
    assert f"intact: {RECORDS} records, anchored" in result.stdout
    append(ledger, decision(-1))


def test_accepting_the_tail_never_covers_a_deleted_or_rewritten_one(ledger: Path) -> None:
    ledger.write_bytes(b"".join(lines(ledger)[:-25]))  # a truncation: checkpoint ahead
    assert anchor_cli(ledger, "--accept-tail").returncode == 1
    forged = json.dumps({"count": 5, "head_hash": "f" * 64})
    head_path(ledger).write_text(forged)  # a checkpoint naming no record of the chain
    refused = anchor_cli(ledger, "--accept-tail")
    assert refused.returncode == 1
    assert "names no record of this chain" in refused.stderr
    assert head_path(ledger).read_text() == forged  # nothing changed
