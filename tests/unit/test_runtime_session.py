"""Session logs: one writer fans the events out in order to every harness; each harness owns
a file under its own UUID and never overwrites one; Claude Code's records chain, carry tool
uses and results, and write notices as queued messages, never as what the user said."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from caucus.models.chat import ToolCall, assistant, tool_result
from caucus.models.tools import ToolResult
from caucus.runtime.events import (
    InputReceived,
    NewThreadMessage,
    NoticeReceived,
    ThreadRunComplete,
    record,
)
from caucus.runtime.session.claude import ClaudeSessionHarness, project_folder
from caucus.runtime.session.files import new_file
from caucus.runtime.session.logger import SessionLogger
from caucus.runtime.session.transcript import TranscriptHarness


def lines(path: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in Path(path).read_text("utf-8").splitlines()]


def conversation() -> list[dict[str, Any]]:
    call = ToolCall("call_1", "get-sum", {"a": 2, "b": 3})
    return [
        record(NoticeReceived("prompt:on-start", "Say you are ready.")),
        record(NewThreadMessage("t", "r1", assistant("ready"))),
        record(ThreadRunComplete("t", "r1", "ready", 2)),
        record(InputReceived("add 2 and 3")),
        record(NewThreadMessage("t", "r2", assistant("", (call,)))),
        record(NewThreadMessage("t", "r2", tool_result(call, "5"))),
        record(NewThreadMessage("t", "r2", assistant("It is 5."))),
        record(ThreadRunComplete("t", "r2", "It is 5.", 6)),
    ]


async def test_every_harness_gets_every_event_in_order_through_one_writer(tmp_path: Path) -> None:
    transcript = TranscriptHarness(tmp_path)
    claude = ClaudeSessionHarness(tmp_path, model="m", cwd="/w")
    logger = SessionLogger([transcript, claude])
    logger.start()
    for event in conversation():
        logger(event)
    call = ToolCall("call_9", "get-sum", {})
    logger.called(call)
    logger.answered(call, ToolResult("5"))
    await logger.close()
    written = lines(transcript.path)
    assert [e["event"] for e in written] == [e["event"] for e in conversation()] + [
        "ToolCalled",
        "ToolAnswered",
    ]
    assert written[-1]["seconds"] >= 0
    assert transcript.session_id != claude.session_id
    assert Path(transcript.path).stat().st_mode & 0o777 == 0o600
    assert Path(claude.path).name == f"{claude.session_id}.jsonl"


def test_claude_records_chain_and_keep_notices_apart_from_what_the_user_said(
    tmp_path: Path,
) -> None:
    harness = ClaudeSessionHarness(tmp_path, model="qwen", cwd="/work/x")
    for event in conversation():
        harness.write(event)
    harness.close()
    records = lines(harness.path)
    kinds = [
        (r["type"], r.get("operation") or r.get("attachment", {}).get("type")) for r in records
    ]
    assert kinds == [
        ("queue-operation", "enqueue"),
        ("attachment", "queued_command"),
        ("queue-operation", "remove"),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
    ]
    chained = [r for r in records if "uuid" in r]
    assert chained[0]["parentUuid"] is None
    assert [r["parentUuid"] for r in chained[1:]] == [r["uuid"] for r in chained[:-1]]
    assert {r["sessionId"] for r in records} == {harness.session_id}
    users = [r for r in chained if r["type"] == "user"]
    assert users[0]["message"] == {"role": "user", "content": "add 2 and 3"}
    assert users[1]["message"]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "5"}
    ]
    uses = chained[3]["message"]["content"]
    assert uses == [
        {"type": "tool_use", "id": "call_1", "name": "get-sum", "input": {"a": 2, "b": 3}}
    ]
    assert chained[3]["message"]["stop_reason"] == "tool_use"
    assert chained[-1]["message"]["content"] == [{"type": "text", "text": "It is 5."}]
    assert all(r["cwd"] == "/work/x" for r in chained)
    # No user record says the notice: it is a queued message.
    assert all("Say you are ready" not in json.dumps(r["message"]) for r in users)


def test_a_new_file_never_takes_the_name_of_one_that_exists(tmp_path: Path) -> None:
    (tmp_path / "taken.jsonl").write_text("keep me", "utf-8")
    ids = iter(["taken", "taken", "fresh"])
    key, path, file = new_file(tmp_path, "{}.jsonl", lambda: next(ids))
    file.close()
    assert (key, path.name) == ("fresh", "fresh.jsonl")
    assert (tmp_path / "taken.jsonl").read_text("utf-8") == "keep me"


def test_claude_code_looks_for_sessions_under_the_directory_with_dashes(tmp_path: Path) -> None:
    assert project_folder("/tmp/cc/my.work", tmp_path) == (
        tmp_path / ".claude" / "projects" / "-tmp-cc-my-work"
    )
