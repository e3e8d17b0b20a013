"""The transcript file: one line per routed message, resumable, repaired, rotated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from caucus.dashboard.transcript import TranscriptWriter
from caucus.services.hub import Hub
from caucus.testing import make_hub


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def records(path: Path) -> list[dict[str, Any]]:
    return [r for r in lines(path) if "seq" in r]


async def chat(hub: Hub, n: int, start: int = 0) -> None:
    alice = await hub.registry.find("alice")
    for i in range(start, start + n):
        await hub.delivery.send(alice, to="bob", content=f"m{i}")


async def test_every_routed_message_gets_one_line(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    async with make_hub(tmp_path, transcript=str(path)) as hub:
        await hub.principals.register(name="alice")
        await hub.principals.register(name="bob")
        await chat(hub, 3)
        await hub.control.say("all", "operator note")
        writer = hub.part(TranscriptWriter)
        assert writer is not None
        await writer.catch_up()
    header, *rest = lines(path)
    assert header["type"] == "start"
    assert [(r["sender"], r["to"], r["content"]) for r in rest] == [
        ("alice", "bob", "m0"),
        ("alice", "bob", "m1"),
        ("alice", "bob", "m2"),
        ("operator", "all", "operator note"),
    ]
    assert rest[0]["delivered_to"] == ["bob"]
    assert {"ts", "seq", "kind", "meta"} <= set(rest[0])
    assert [r["seq"] for r in rest] == sorted(r["seq"] for r in rest)


async def test_a_restart_continues_where_the_file_ends(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    async with make_hub(tmp_path, transcript=str(path)) as hub:
        await hub.principals.register(name="alice")
        await hub.principals.register(name="bob")
        await chat(hub, 2)
    async with make_hub(tmp_path, transcript=str(path)) as hub:
        await chat(hub, 2, start=2)
    assert [r["content"] for r in records(path)] == ["m0", "m1", "m2", "m3"]
    assert sum(1 for r in lines(path) if r.get("type") == "start") == 1


async def test_messages_stored_while_the_file_lagged_are_written_on_restart(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    async with make_hub(tmp_path, transcript=str(path)) as hub:
        await hub.principals.register(name="alice")
        await hub.principals.register(name="bob")
        await chat(hub, 2)
    async with make_hub(tmp_path) as hub:  # a run without the transcript
        await chat(hub, 3, start=2)
    async with make_hub(tmp_path, transcript=str(path)):
        pass
    assert [r["content"] for r in records(path)] == [f"m{i}" for i in range(5)]


async def test_a_torn_last_line_is_reported_and_its_record_written_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    async with make_hub(tmp_path, transcript=str(path)) as hub:
        await hub.principals.register(name="alice")
        await hub.principals.register(name="bob")
        await chat(hub, 3)
    # Simulate a crash in the middle of writing the last record.
    text = path.read_text().splitlines(keepends=True)
    path.write_text("".join(text[:-1]) + text[-1][: len(text[-1]) // 2])
    async with make_hub(tmp_path, transcript=str(path)) as hub:
        writer = hub.part(TranscriptWriter)
        assert writer is not None
        assert writer.repairs == 1
    parsed = lines(path)  # every line is whole again
    (repair,) = [r for r in parsed if r.get("type") == "repair"]
    assert repair["torn_bytes"] > 0
    assert [r["content"] for r in records(path)] == ["m0", "m1", "m2"]


async def test_the_file_rotates_and_keeps_a_bounded_history(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    async with make_hub(
        tmp_path,
        transcript=str(path),
        transcript_max_bytes=600,
        transcript_keep=2,
        send_rate_capacity=100,
    ) as hub:
        await hub.principals.register(name="alice")
        await hub.principals.register(name="bob")
        writer = hub.part(TranscriptWriter)
        assert writer is not None
        for i in range(12):
            await chat(hub, 1, start=i)
            await writer.catch_up()
    rotated = sorted(tmp_path.glob("t.jsonl.*"))
    assert [p.name for p in rotated] == ["t.jsonl.1", "t.jsonl.2"]
    newest = records(path)
    assert newest
    assert newest[-1]["content"] == "m11"
    kept = records(rotated[1]) + records(rotated[0]) + newest
    seqs = [r["seq"] for r in kept]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(seqs)
