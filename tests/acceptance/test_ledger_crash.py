"""A real kill -9 in the ledger's crash window: the lines fsynced, the head checkpoint not yet
moved. The next start heals it without a person; a record the hub did not write still halts."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

import pytest

from caucus.client import HubClient
from caucus.errors import HubUnavailable
from caucus.ledger.canonical import line, seal
from caucus.ledger.commands import verify
from caucus.ledger.tail import newest_first
from caucus.ledger.verify import head_path
from caucus.operator_client import OperatorClient
from tests.acceptance.hubproc import HubProcess, start_hub
from tests.conftest import eventually

pytestmark = pytest.mark.slow
ONE = [{"key": "go", "type": "radio", "options": ["yes", "no"]}]


async def _answer(hub: HubProcess, token: str, title: str, *, wait: bool = True) -> str:
    async with HubClient(hub.url) as asker, OperatorClient(hub.url, token=token) as operator:
        await asker.register(f"asker-{time.monotonic_ns()}")
        form = await asker.ask_operator(title, ONE)
        # The hub may record the answer and die (as injected) before it replies.
        with contextlib.suppress(HubUnavailable) if not wait else contextlib.nullcontext():
            await operator.answer_form(form.form_id, {"go": "yes"})

        async def on_ledger() -> bool:
            done = {f.form_id: f for f in await operator.forms("answered")}
            return done[form.form_id].decision_hash is not None

        if wait:
            await eventually(on_ledger, within=30, what=f"{title!r} on the ledger")
    return form.form_id


async def _killed_in_the_window(tmp_path: Path) -> tuple[Path, Path, str, list[str]]:
    """Two decisions recorded, the third's checkpoint move killed: (db, ledger, token, ids)."""
    db, ledger = tmp_path / "hub.db", tmp_path / "decisions.jsonl"
    hub = start_hub(db, fault="ledger-checkpoint", env={"CAUCUS_FAULT_AFTER": "3"})
    try:
        token = (tmp_path / "operator-token").read_text().strip()
        ids = [await _answer(hub, token, f"Question {n}") for n in (1, 2)]
        ids.append(await _answer(hub, token, "Question 3", wait=False))
        assert hub.wait(30) == -9  # killed itself in the window, as injected
    finally:
        hub.stop()
    assert [r["caucus"]["form_id"] for r in reversed(list(newest_first(ledger)))] == ids
    assert json.loads(head_path(ledger).read_text())["count"] == 2  # the checkpoint lags
    assert verify(ledger).code != 0  # as a person would find it
    return db, ledger, token, ids


async def test_a_kill_between_the_fsync_and_the_checkpoint_heals_on_the_next_start(
    tmp_path: Path,
) -> None:
    db, ledger, token, ids = await _killed_in_the_window(tmp_path)
    hub = start_hub(db)
    try:
        async with OperatorClient(hub.url, token=token) as operator:
            status = await operator.ledger()
            assert (status.intact, status.records) == (True, 3)
            assert status.recovered is not None
            assert (status.recovered.from_count, status.recovered.to_count) == (2, 3)
            ids.append(await _answer(hub, token, "Question 4"))  # recorded, nobody anchored
            by_form = {f.form_id: f.decision_hash for f in await operator.forms("answered")}
            assert all(by_form[i] for i in ids)
    finally:
        hub.stop()
    assert [r["caucus"]["form_id"] for r in reversed(list(newest_first(ledger)))] == ids
    assert verify(ledger).code == 0


async def test_a_forged_record_past_the_checkpoint_still_halts_recording(tmp_path: Path) -> None:
    db, ledger, token, _ = await _killed_in_the_window(tmp_path)
    tip = next(iter(newest_first(ledger)))
    copy = {**tip, "caucus": {**tip["caucus"], "form_id": "f_forged"}}
    forged = seal(copy, tip["hash"])
    with ledger.open("a") as handle:  # chains correctly, but this hub never wrote it
        handle.write(line(forged) + "\n")
    hub = start_hub(db)
    try:
        async with OperatorClient(hub.url, token=token) as operator:
            later = await _answer(hub, token, "Question 4", wait=False)

            async def refused() -> bool:
                return (await operator.ledger()).unrecorded_error is not None

            await eventually(refused, within=30, what="the recording refused")
            status = await operator.ledger()
            assert (status.intact, status.recovered) == (False, None)
            assert "record 3 past the head checkpoint was not written by this hub" in (
                status.unrecorded_error or ""
            )
            by_form = {f.form_id: f.decision_hash for f in await operator.forms("answered")}
            assert by_form[later] is None
    finally:
        hub.stop()
    assert "f_forged" in {r["caucus"]["form_id"] for r in newest_first(ledger)}
    assert later not in {r["caucus"]["form_id"] for r in newest_first(ledger)}
