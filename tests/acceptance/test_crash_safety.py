"""Nothing acknowledged to a sender is lost when the hub is killed with SIGKILL."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import pytest

from caucus.client import HubClient
from caucus.errors import HubUnavailable
from caucus.ledger.commands import verify
from caucus.operator_client import OperatorClient
from tests.acceptance.hubproc import start_hub
from tests.conftest import eventually
from tests.waiting import scaled

FAST = {"CAUCUS_SEND_RATE_CAPACITY": "1000000", "CAUCUS_SEND_RATE_REFILL": "1000000"}
pytestmark = pytest.mark.slow


async def drain(client: HubClient, expected: int) -> list[tuple[int, str]]:
    got: list[tuple[int, str]] = []
    async with asyncio.timeout(scaled(120)):
        while len(got) < expected:
            batch = await client.receive(timeout=5)
            if not batch.messages:
                break
            got += [(m.seq, m.content) for m in batch.messages]
    await client.flush_acks()
    return got


async def send_all(client: HubClient, n: int, acked: dict[int, str], width: int = 32) -> None:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(i)

    async def worker() -> None:
        while not queue.empty():
            i = queue.get_nowait()
            result = await client.send("bob", f"msg-{i}")
            acked[result.seq] = f"msg-{i}"

    results = await asyncio.gather(*[worker() for _ in range(width)], return_exceptions=True)
    for outcome in results:
        if isinstance(outcome, BaseException):
            raise outcome


async def test_1000_acknowledged_messages_survive_sigkill_in_seq_order(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    hub = start_hub(db, env=FAST)
    acked: dict[int, str] = {}
    try:
        async with HubClient(hub.url) as alice, HubClient(hub.url) as bob:
            await alice.register("alice")
            await bob.register("bob")
            bob_token = bob.token
            await send_all(alice, 1000, acked)
        hub.kill()  # no shutdown, no flush: whatever was acknowledged must be on disk
    finally:
        hub.stop()
    assert len(acked) == 1000

    again = start_hub(db, env=FAST)
    try:
        async with HubClient(again.url, token=bob_token) as bob:
            reg = await bob.register("bob")
            assert reg.outcome == "reaffirmed"
            got = await drain(bob, 1000)
    finally:
        again.stop()
    seqs = [seq for seq, _ in got]
    assert seqs == sorted(acked)  # all of them, exactly once, in seq order
    assert dict(got) == acked


async def test_a_kill_in_the_middle_of_a_stream_loses_nothing_acknowledged(
    tmp_path: Path,
) -> None:
    db = tmp_path / "midstream.db"
    hub = start_hub(db, env=FAST)
    acked: dict[int, str] = {}
    try:
        async with HubClient(hub.url) as alice, HubClient(hub.url) as bob:
            await alice.register("alice")
            await bob.register("bob")
            bob_token = bob.token

            async def keep_sending() -> None:
                # The hub dies under us: the sends in flight then were never acknowledged.
                with contextlib.suppress(HubUnavailable):
                    await send_all(alice, 100_000, acked, width=16)

            sender = asyncio.create_task(keep_sending())
            await eventually(lambda: len(acked) >= 500, within=120, what="500 acks")
            hub.kill()
            await sender
    finally:
        hub.stop()

    again = start_hub(db, env=FAST)
    try:
        async with HubClient(again.url, token=bob_token) as bob:
            await bob.register("bob")
            got = await drain(bob, len(acked) + 16)
    finally:
        again.stop()
    received = dict(got)
    missing = set(acked) - set(received)
    assert not missing, f"{len(missing)} acknowledged messages lost"
    assert [s for s, _ in got] == sorted(received)


async def test_the_transcript_holds_one_line_per_message_across_a_kill_and_restart(
    tmp_path: Path,
) -> None:
    db, transcript = tmp_path / "t.db", tmp_path / "transcript.jsonl"
    hub = start_hub(db, "--transcript", str(transcript), env=FAST)
    acked: dict[int, str] = {}
    try:
        async with HubClient(hub.url) as alice, HubClient(hub.url) as bob:
            await alice.register("alice")
            await bob.register("bob")

            async def keep_sending() -> None:
                with contextlib.suppress(HubUnavailable):
                    await send_all(alice, 100_000, acked, width=16)

            sender = asyncio.create_task(keep_sending())
            await eventually(lambda: len(acked) >= 300, within=120, what="300 acks")
            hub.kill()
            await sender
    finally:
        hub.stop()
    # A crash in the middle of a write leaves half a line; make sure there is one.
    with open(transcript, "ab") as handle:
        handle.write(b'{"ts": 1.0, "seq": 999999, "sender": "ali')

    again = start_hub(db, "--transcript", str(transcript), env=FAST)
    try:
        token = (tmp_path / "operator-token").read_text().strip()
        async with OperatorClient(again.url, token=token) as operator:
            stored = [m["seq"] for m in json.loads(await operator.export("json"))["messages"]]

            def written() -> list[dict[str, object]]:
                out = []
                for line in transcript.read_text().splitlines():
                    out.append(json.loads(line))  # every line is whole: no torn one is left
                return out

            await eventually(
                lambda: [r["seq"] for r in written() if "seq" in r] == stored,
                within=60,
                what="the transcript to catch up",
            )
    finally:
        again.terminate()
        err = again.stderr()
        again.stop()
    assert set(acked) <= set(stored)  # nothing acknowledged is missing from the record
    lines = written()
    assert sum(1 for r in lines if r.get("type") == "repair") == 1
    assert "incomplete line" in err


async def test_tasks_in_every_state_survive_a_kill_and_the_sweeps_resume(
    tmp_path: Path,
) -> None:
    db = tmp_path / "tasks.db"
    first_run = {
        **FAST,
        "CAUCUS_TASK_TTL": "8",
        "CAUCUS_TASK_VISIBILITY_TIMEOUT": "2",
        "CAUCUS_MAINTENANCE_INTERVAL": "600",
    }  # no sweep before the kill
    hub = start_hub(db, env=first_run)
    try:
        async with (
            HubClient(hub.url) as alice,
            HubClient(hub.url) as bob,
            HubClient(hub.url) as carol,
        ):
            await alice.register("alice")
            await bob.register("bob")
            await carol.register("carol")
            tokens = {"alice": alice.token, "bob": bob.token}
            unclaimed = await alice.send_task("carol", "nobody will read this")
            claimed = await alice.send_task("bob", "working on it")
            parked = await alice.send_task("bob", "needs a decision")
            done = await alice.send_task("bob", "finish me")
            failed = await alice.send_task("bob", "fail me")
            canceled = await alice.send_task("bob", "cancel me")
            await bob.receive(timeout=5)  # claims all five of bob's
            await bob.request_input(parked.task_id, "left or right?")
            await bob.reply_task(done.task_id, "finished")
            await bob.fail_task(failed.task_id, "could not")
            await alice.cancel_task(canceled.task_id)
            expected = {
                unclaimed.task_id: "pending",
                claimed.task_id: "in_progress",
                parked.task_id: "input_required",
                done.task_id: "completed",
                failed.task_id: "failed",
                canceled.task_id: "canceled",
            }
            for task_id, state in expected.items():
                assert (await alice.task_status(task_id)).state == state
        hub.kill()
    finally:
        hub.stop()

    again = start_hub(db, env={**first_run, "CAUCUS_MAINTENANCE_INTERVAL": "0.2"})
    try:
        async with (
            HubClient(again.url, token=tokens["alice"]) as alice,
            HubClient(again.url, token=tokens["bob"]) as bob,
        ):
            for task_id in (done.task_id, failed.task_id, canceled.task_id):
                assert (await alice.task_status(task_id)).state == expected[task_id]

            async def state_of(task_id: str) -> str:
                return (await alice.task_status(task_id)).state

            # The silent worker's claim lapses and the task is offered again: its history says
            # so (the TTL may end it next; how long the restart took cannot change that).
            async def requeued() -> bool:
                history = (await alice.task_status(claimed.task_id)).history
                return any(e.detail == "the worker went silent" for e in history)

            await eventually(requeued, within=30, what="the claim to lapse")

            # ...and unclaimed and parked tasks expire at their TTL.
            async def expired() -> bool:
                return {await state_of(unclaimed.task_id), await state_of(parked.task_id)} == {
                    "expired"
                }

            await eventually(expired, within=30, what="the TTL sweep")
            offered = [m for m in (await bob.receive(timeout=5)).messages if m.kind == "task"]
            assert claimed.task_id in {(m.meta or {}).get("task_id") for m in offered}
    finally:
        again.stop()


async def test_every_answered_form_reaches_the_ledger_once_across_a_kill(tmp_path: Path) -> None:
    db = tmp_path / "forms.db"
    ledger = tmp_path / "decisions.jsonl"
    one = [{"key": "go", "type": "radio", "options": ["yes", "no"]}]
    hub = start_hub(db, env=FAST)
    answered: list[str] = []
    try:
        token = (tmp_path / "operator-token").read_text().strip()
        async with OperatorClient(hub.url, token=token) as operator:
            askers = [HubClient(hub.url) for _ in range(40)]
            forms = []
            for n, asker in enumerate(askers):
                await asker.register(f"asker-{n}")
                forms += [await asker.ask_operator(f"question {n}.{k}", one) for k in range(5)]

            async def answer_all() -> None:
                with contextlib.suppress(HubUnavailable):
                    for form in forms:
                        await operator.answer_form(form.form_id, {"go": "yes"})
                        answered.append(form.form_id)

            answering = asyncio.create_task(answer_all())
            await eventually(lambda: len(answered) >= 50, within=120, what="50 answers")
            hub.kill()
            await answering
            for asker in askers:
                await asker.aclose()
    finally:
        hub.stop()

    again = start_hub(db, env=FAST)
    try:
        async with OperatorClient(again.url, token=token) as operator:

            async def all_recorded() -> bool:
                done = await operator.forms("answered")
                return all(f.decision_hash for f in done) and len(done) >= len(answered)

            # A kill between a record's fsync and its checkpoint heals on this start.
            await eventually(all_recorded, within=60, what="every answer on the ledger")
            status = await operator.ledger()
            assert status.intact, status.unrecorded_error
            records = await operator.decisions(limit=200)
            ids = [r.model_extra["caucus"]["form_id"] for r in records]
            assert len(ids) == len(set(ids))  # none twice
            assert set(answered) <= set(ids)  # none lost
            by_form = {f.form_id: f.decision_hash for f in await operator.forms("answered")}
            assert {r.model_extra["caucus"]["form_id"]: r.hash for r in records} == by_form
    finally:
        again.stop()
    assert verify(ledger).code == 0
