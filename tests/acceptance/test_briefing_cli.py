"""A directory's decision loop as a user runs it: `caucus init`, intents, `caucus briefing`
(every agenda subject recorded, intent updates proposed, briefing.md/.json written, emailed
to a local SMTP server and piped to a command), `intents apply` asking for each proposal,
`caucus anchor --config` running anchor_command after the head is recorded, and `caucus
outcome` scoring the panel and leaving a note the next deliberation reads."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from caucus.testing import FakeOpenAI, Say, last_user, serve_fake
from tests import record_format
from tests.acceptance.test_deliberate_cli import caucus
from tests.smtpd import smtp_server
from tests.waiting import within


def script(request: dict[str, Any]) -> list[Any]:
    prompt = last_user(request)
    if prompt.startswith("Reply with the JSON object"):
        return [Say('{"ok": true}')]
    if prompt.startswith("You keep a list of standing intents"):
        return [
            Say(
                json.dumps(
                    {
                        "proposals": [
                            {
                                "intent": "latency",
                                "changes": {"paused_until": "2027-01-15"},
                                "reason": "PostgreSQL work comes first.",
                            },
                            {
                                "intent": "docs",
                                "changes": {"last_acted": "2026-12-02"},
                                "reason": "Done today.",
                            },
                            {"intent": "nonexistent", "changes": {"status": "done"}, "reason": "?"},
                        ]
                    }
                )
            )
        ]
    if prompt.startswith("You chair"):
        return [Say('{"stance": "approve", "decision": "Go ahead.", "confidence": 0.8}')]
    name = re.match(r"You are (\w+),", prompt)
    assert name is not None
    stance = "reject" if name.group(1) == "skeptic" else "approve"
    return [
        Say(
            json.dumps(
                {"stance": stance, "summary": f"{name.group(1)} says {stance}", "confidence": 0.7}
            )
        )
    ]


async def test_the_decision_loop_from_init_to_reflection(tmp_path: Path) -> None:
    fake = FakeOpenAI(script)
    async with serve_fake(fake) as url, smtp_server() as smtp:
        code, out, err = await caucus(
            "init", "--model", "fake-model", "--base-url", f"{url}/v1", cwd=tmp_path
        )
        assert code == 0, err
        assert "answered" in out
        config = tmp_path / "config.yaml"
        text = config.read_text()
        assert text.startswith("# Caucus deliberation config")
        piped = tmp_path / "piped.md"
        anchored_env = tmp_path / "anchor-env.txt"
        text = text.replace("agenda: []", "agenda: ['Adopt PostgreSQL?', 'Cut a release?']")
        (tmp_path / "pipe.py").write_text(
            f"import sys, pathlib; pathlib.Path({str(piped)!r}).write_text(sys.stdin.read())\n"
        )
        (tmp_path / "anchor.py").write_text(
            "import os, pathlib\n"
            f"pathlib.Path({str(anchored_env)!r}).write_text(os.environ['CAUCUS_HEAD_HASH'] + ' '"
            " + pathlib.Path(os.environ['CAUCUS_ANCHORS']).read_text())\n"
        )
        notify = {
            "email": {
                "host": "127.0.0.1",
                "port": smtp.port,
                "sender": "caucus@localhost",
                "to": ["ops@example.org"],
                "subject": "Briefing {date}: {count} decisions",
            },
            "command": [sys.executable, str(tmp_path / "pipe.py")],
        }
        text = text.replace("notify: {}", f"notify: {json.dumps(notify)}")
        text += f"anchor_command: {json.dumps([sys.executable, str(tmp_path / 'anchor.py')])}\n"
        config.write_text(text)

        for args in (
            ("latency", "--direction", "reduce", "--target", "p99 under 25 ms"),
            ("docs", "--direction", "improve", "--cadence-days", "14"),
        ):
            code, _, err = await caucus("intents", "add", *args, cwd=tmp_path)
            assert code == 0, err

        code, out, err = await caucus("briefing", cwd=tmp_path)
        assert code == 0, err
        assert "[1/2] Adopt PostgreSQL?" in err
        assert "[2/2] Cut a release?" in err
        assert "Adopt PostgreSQL?: Go ahead. (80%)" in out
        assert "2 intent update(s) proposed" in out
        await within(smtp.arrived.wait(), 10, "the process to end")

    analyst_prompts = [last_user(r) for r in fake.requests if "You are advocate" in last_user(r)]
    assert all("intent:latency" in p for p in analyst_prompts)  # open intents as evidence

    briefing = json.loads((tmp_path / "briefing.json").read_text())
    assert [d["subject"] for d in briefing["decisions"]] == ["Adopt PostgreSQL?", "Cut a release?"]
    assert [p["intent"] for p in briefing["proposals"]] == ["latency", "docs"]
    assert briefing["dropped"] == ["'nonexistent': no such intent"]
    markdown = (tmp_path / "briefing.md").read_text()
    assert "**Decision** (80% confidence): Go ahead." in markdown
    assert "- Dissent [skeptic]: skeptic says reject" in markdown
    assert piped.read_text() == markdown

    (mail,) = smtp.received
    assert mail.recipients == ["ops@example.org"]
    assert mail.message["Subject"].startswith("Briefing 20")
    assert mail.message["Subject"].endswith(": 2 decisions")
    assert "Go ahead." in mail.message.get_payload(decode=True).decode()

    ledger = tmp_path / "decisions.jsonl"
    assert record_format.verify(ledger) == (2, True)

    # Apply: yes to the first, no to the second.
    code, out, err = await caucus("intents", "apply", cwd=tmp_path, stdin=b"y\nn\n")
    assert code == 0, err
    assert "applied 1, skipped 1" in out
    code, out, _ = await caucus("intents", "list", "--json", cwd=tmp_path)
    listed = {i["name"]: i for i in json.loads(out)}
    assert listed["latency"]["status"] == "paused"
    assert listed["latency"]["paused_until"] == "2027-01-15"
    assert listed["docs"]["last_acted"] is None

    code, out, err = await caucus("anchor", "--config", "config.yaml", cwd=tmp_path)
    assert code == 0, err
    assert "anchored 2 records" in out
    head = json.loads(ledger.with_name("decisions.jsonl.head").read_text())["head_hash"]
    hash_seen, anchors_seen = anchored_env.read_text().split(" ", 1)
    assert hash_seen == head
    assert json.loads(anchors_seen.splitlines()[-1])["head_hash"] == head  # written before

    first = json.loads(ledger.read_text().splitlines()[0])
    code, out, err = await caucus(
        "outcome", first["hash"][:10], "--result", "failed", "--json", cwd=tmp_path
    )
    assert code == 0, err
    scored = {s["who"]: s for s in json.loads(out)["scores"]}
    assert abs(scored["chair"]["brier"] - 0.64) < 1e-9  # said 80%, and it failed
    assert abs(scored["skeptic"]["brier"] - 0.09) < 1e-9  # dissented at 0.7: forecast 0.3
    assert "Brier" in (tmp_path / "memory.md").read_text()

    # The next deliberation reads the lesson as evidence.
    async with serve_fake(fake) as url:
        text = config.read_text().replace(
            re.search(r"base_url: .*", config.read_text()).group(0), f"base_url: {url}/v1"
        )
        config.write_text(text)
        code, _, err = await caucus("deliberate", "Try again?", cwd=tmp_path)
    assert code == 0, err
    last_analyst = [last_user(r) for r in fake.requests if "You are skeptic" in last_user(r)][-1]
    assert "memory.md#" in last_analyst
    assert "chair: Brier 0.640 over 1 decision(s)" in last_analyst


async def test_init_refuses_to_overwrite_and_says_when_the_backend_does_not_answer(
    tmp_path: Path,
) -> None:
    code, out, _ = await caucus("init", "--base-url", "http://127.0.0.1:9/v1", cwd=tmp_path)
    assert code == 1
    assert "warning: the backend did not answer" in out
    assert (tmp_path / "config.yaml").exists()
    code, _, err = await caucus("init", cwd=tmp_path)
    assert code == 2
    assert "exists; give --force" in err
