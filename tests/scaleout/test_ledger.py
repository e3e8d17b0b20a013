"""Two hub processes answering forms at once never fork the decision ledger (issue 14, ADR
0014): they share one ledger file, append to it under its lock, and each looks up what the
other already recorded, so every answer is on one chain exactly once."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import pytest

from caucus.client import HubClient
from caucus.domain.decisions import form_id_of
from caucus.ledger.commands import verify
from caucus.operator_client import OperatorClient
from tests.conftest import eventually
from tests.scaleout.conftest import Room, operator_token

pytestmark = pytest.mark.slow
ONE = [{"key": "go", "type": "radio", "options": ["yes", "no"]}]


async def test_two_processes_answering_forms_at_once_keep_one_chain(
    room: Room, tmp_path: Path
) -> None:
    a, b = room(2)
    token = operator_token(tmp_path)
    askers = [HubClient(hub.url) for hub in (a, b) for _ in range(5)]
    try:
        forms = []
        for n, asker in enumerate(askers):
            await asker.register(f"asker-{n}")
            forms += [await asker.ask_operator(f"question {n}.{k}", ONE) for k in range(4)]
        async with (
            OperatorClient(a.url, token=token) as on_a,
            OperatorClient(b.url, token=token) as on_b,
        ):

            async def answer(operator: OperatorClient, mine: list[str]) -> None:
                for form_id in mine:
                    await operator.answer_form(form_id, {"go": "yes"})

            ids = [f.form_id for f in forms]
            await asyncio.gather(answer(on_a, ids[0::2]), answer(on_b, ids[1::2]))

            async def all_recorded() -> bool:
                done = await on_b.forms("answered")
                return len(done) == len(ids) and all(f.decision_hash for f in done)

            await eventually(all_recorded, within=60, what="every answer on the ledger")
            status_a, status_b = await on_a.ledger(), await on_b.ledger()
            assert status_a.intact
            assert status_b.intact
            # One room, one ledger: under the room's identity in the shared home.
            assert status_a.path == status_b.path
            assert Path(status_a.path).parent.parent == tmp_path / "rooms"
    finally:
        for asker in askers:
            await asker.aclose()
    ledger = Path(status_a.path)
    assert verify(ledger).code == 0
    lines = [json.loads(line) for line in ledger.read_text().splitlines() if line.strip()]
    recorded = [form_id_of(r) for r in lines]
    assert sorted(str(r) for r in recorded) == sorted(ids)  # each answer once, on one chain
    for prev, record in itertools.pairwise(lines):
        assert record["prev_hash"] == prev["hash"]
