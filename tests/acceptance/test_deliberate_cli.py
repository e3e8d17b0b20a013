"""`caucus deliberate` as a process, on the scripted OpenAI-compatible fake over real HTTP:
the printed decision, dissent and record line, progress on stderr, config.yaml, evidence from
a file and from commands (fail closed), and a ledger that Caucus and an independent verifier
of the format both accept."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from caucus.testing import Call, FakeOpenAI, Say, last_user, serve_fake, tool_messages
from tests import record_format
from tests.nodebin import node_bin
from tests.waiting import within


def panel_script(split: bool = True) -> Any:
    """Advocate and assessor approve; the skeptic rejects (or, unsplit, approves too)."""

    def script(request: dict[str, Any]) -> list[Any]:
        prompt = last_user(request)
        if prompt.startswith("You chair"):
            return [
                Say(
                    'Weighing it all: {"stance": "approve", "decision": "Adopt PostgreSQL '
                    'for the shared deployment.", "confidence": 0.75}'
                )
            ]
        who = re.match(r"You are (\w+),", prompt)
        assert who is not None
        name = who.group(1)
        stance = "reject" if split and name == "skeptic" else "approve"
        rebuttal = "rebuttal round" in prompt
        summary = f"{name} {'still ' if rebuttal else ''}thinks {stance}"
        return [
            Say(
                json.dumps(
                    {
                        "stance": stance,
                        "summary": summary,
                        "confidence": 0.6 if stance == "reject" else 0.8,
                        "evidence": ["bench.txt"],
                    }
                )
            )
        ]

    return script


async def caucus(*args: str, cwd: Path, stdin: bytes = b"") -> tuple[int, str, str]:
    """`caucus ARGS` as a process in `cwd`, `stdin` its input: (exit code, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "caucus",
        *args,
        cwd=str(cwd),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await within(proc.communicate(stdin), 120, "the process to end")
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_a_split_panel_decides_with_dissent_and_both_verifiers_accept_the_ledger(
    tmp_path: Path,
) -> None:
    fake = FakeOpenAI(panel_script())
    (tmp_path / "evidence.json").write_text(
        json.dumps(
            [
                {"source": "benchmarks", "ref": "bench.txt", "msgs_per_s": 2124},
                {"url": "https://example.org/pg", "note": "no source given"},
            ]
        )
    )
    async with serve_fake(fake) as url:
        code, out, err = await caucus(
            "deliberate",
            "Adopt PostgreSQL?",
            "--evidence",
            "evidence.json",
            "--backend",
            "openai",
            "--model",
            "fake-model",
            "--base-url",
            f"{url}/v1",
            "--rounds",
            "2",
            "--log",
            "d.jsonl",
            cwd=tmp_path,
        )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == ("DECISION (75% confidence): Adopt PostgreSQL for the shared deployment.")
    assert lines[1] == "DISSENT [skeptic]: skeptic still thinks reject"
    assert re.fullmatch(r"On the record: d\.jsonl \(hash [0-9a-f]{12}…\)", lines[2])
    for name in ("advocate", "skeptic", "assessor"):
        for r in (1, 2):
            assert f"round {r}: {name} answered" in err
    assert "the chair decided (approve, 75%)" in err
    # 3 analysts x 2 rounds + the chair, each one request.
    assert len(fake.requests) == 7

    ledger = tmp_path / "d.jsonl"
    record = json.loads(ledger.read_text().splitlines()[0])
    assert record["schema_version"] == "0.2"
    assert len(record["rounds"]) == 2
    assert [p["agent"] for p in record["dissent"]] == ["skeptic"]
    assert record["evidence"][1]["source"] == "evidence.json"
    assert record["evidence"][1]["ref"] == "https://example.org/pg"
    assert record["evidence"][1]["note"] == "no source given"
    assert lines[2].endswith(f"(hash {record['hash'][:12]}…)")

    assert record_format.verify(ledger) == (1, True)
    code, out, _ = await caucus("verify", "d.jsonl", cwd=tmp_path)
    assert code == 0
    assert "intact: 1 records, anchored" in out
    code, out, _ = await caucus("anchor", "--log", "d.jsonl", "--json", cwd=tmp_path)
    assert code == 0
    assert json.loads(out)["head_hash"] == record["hash"]


async def test_config_yaml_in_the_directory_sets_panel_stances_and_evidence_sources(
    tmp_path: Path,
) -> None:
    def script(request: dict[str, Any]) -> list[Any]:
        prompt = last_user(request)
        if prompt.startswith("You chair"):
            return [Say('{"stance": "build", "decision": "Build it.", "confidence": 0.9}')]
        assert "ledger-size" in prompt  # the evidence source's item reached every analyst
        return [Say('{"stance": "build", "summary": "fits", "confidence": 0.9}')]

    fake = FakeOpenAI(script)
    async with serve_fake(fake) as url:
        (tmp_path / "config.yaml").write_text(
            "log: records/decisions.jsonl\n"
            "max_rounds: 3\n"
            f"backend: {{type: openai, model: fake-model, base_url: '{url}/v1', json_mode: true}}\n"
            "stances: [Buy, Build]\n"
            "panel:\n"
            "  - {name: cfo, charge: Mind the money.}\n"
            "  - {name: cto, charge: Mind the system.}\n"
            "evidence_sources:\n"
            f"  - name: sizes\n    command: [{sys.executable!r}, -c, "
            '\'print("[{\\"ref\\": \\"ledger-size\\"}]")\']\n'
        )
        (tmp_path / "records").mkdir()
        code, out, err = await caucus("deliberate", "Buy or build?", "--json", cwd=tmp_path)
    assert code == 0, err
    printed = json.loads(out)
    assert printed["log"].endswith("records/decisions.jsonl")
    record = printed["record"]
    assert [p["agent"] for p in record["positions"]] == ["cfo", "cto"]
    assert record["schema_version"] == "0.1"  # unanimous: one round
    assert record["evidence"] == [{"ref": "ledger-size", "source": "sizes"}]
    assert record_format.verify(tmp_path / "records" / "decisions.jsonl") == (1, True)
    assert all(r["response_format"] == {"type": "json_object"} for r in fake.requests)


async def test_json_schema_sends_each_answers_schema_so_a_small_model_is_held_to_it(
    tmp_path: Path,
) -> None:
    def script(request: dict[str, Any]) -> list[Any]:
        if last_user(request).startswith("You chair"):
            return [Say('{"stance": "build", "decision": "Build it.", "confidence": 0.9}')]
        return [Say('{"stance": "build", "summary": "fits", "confidence": 0.9, "evidence": []}')]

    fake = FakeOpenAI(script)
    async with serve_fake(fake) as url:
        (tmp_path / "config.yaml").write_text(
            f"backend: {{type: openai, model: fake-model, base_url: '{url}/v1', "
            "json_mode: true, json_schema: true}\n"
            "stances: [buy, build]\n"
        )
        code, _out, err = await caucus("deliberate", "Buy or build?", cwd=tmp_path)
    assert code == 0, err
    formats = [r["response_format"] for r in fake.requests]
    assert all(f["type"] == "json_object" for f in formats)
    chair = [f["schema"] for f in formats if "decision" in f["schema"]["properties"]]
    analysts = [f["schema"] for f in formats if "summary" in f["schema"]["properties"]]
    assert len(chair) == 1
    assert len(analysts) == len(formats) - 1 >= 3
    for schema in (*chair, *analysts):
        assert schema["properties"]["stance"]["enum"] == ["buy", "build"]
        assert schema["properties"]["confidence"]["enum"] == [n / 10 for n in range(11)]
    evidence = analysts[0]["properties"]["evidence"]
    assert (evidence["type"], evidence["maxItems"]) == ("array", 8)
    assert analysts[0]["properties"]["summary"]["maxLength"] == 600
    assert set(analysts[0]["required"]) == {"stance", "summary", "confidence", "evidence"}


async def test_a_broken_evidence_source_aborts_and_nothing_is_recorded(tmp_path: Path) -> None:
    fake = FakeOpenAI(panel_script())
    async with serve_fake(fake) as url:
        (tmp_path / "config.yaml").write_text(
            f"backend: {{model: fake-model, base_url: '{url}/v1'}}\n"
            "evidence_sources:\n"
            f"  - {{name: flaky, command: [{sys.executable!r}, -c, 'import sys; sys.exit(3)']}}\n"
        )
        code, _out, err = await caucus("deliberate", "Ship?", cwd=tmp_path)
    assert code == 1
    assert "evidence source 'flaky' exited with 3; nothing was decided" in err
    assert not (tmp_path / "decisions.jsonl").exists()
    assert fake.requests == []


async def test_config_and_flags_exclude_each_other_and_bad_config_names_the_key(
    tmp_path: Path,
) -> None:
    (tmp_path / "c.yaml").write_text("max_rounds: 9\n")
    code, _, err = await caucus(
        "deliberate", "S", "--config", "c.yaml", "--model", "m", cwd=tmp_path
    )
    assert code == 2
    assert "--config and --model exclude each other" in err
    code, _, err = await caucus("deliberate", "S", "--config", "c.yaml", cwd=tmp_path)
    assert code == 2
    assert "c.yaml: max_rounds: Input should be less than or equal to 4" in err
    (tmp_path / "c.yaml").write_text("panels: []\n")
    code, _, err = await caucus("deliberate", "S", "--config", "c.yaml", cwd=tmp_path)
    assert code == 2
    assert "panels: Extra inputs are not permitted" in err


async def test_an_unreachable_model_server_says_how_to_fix_it(tmp_path: Path) -> None:
    code, _, err = await caucus(
        "deliberate", "S", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", cwd=tmp_path
    )
    assert code == 1
    assert "cannot reach the model server at http://127.0.0.1:9/v1" in err


def test_the_independent_verifier_reproduces_the_formats_golden_vector() -> None:
    golden = {
        "subject": "Ship v0.1? — héllo",
        "decision": "yes",
        "confidence": 0.8,
        "positions": [{"agent": "a1", "stance": "yes", "summary": "ready", "confidence": 1.0}],
        "dissent": [],
        "evidence": [{"source": "spec", "ref": "SPEC.md"}],
        "timestamp": "2026-07-11T00:00:00+00:00",
        "schema_version": "0.1",
        "prev_hash": "0" * 64,
    }
    assert record_format.record_hash(golden) == (
        "06624a603d2f031db60ad142d28addd8f3483d08ebfc2be16e140753d9bc221d"
    )


async def test_analysts_read_evidence_through_read_only_mcp_tools(tmp_path: Path) -> None:
    """The MCP evidence layer on an OpenAI-compatible backend: the servers of an MCP config
    (`@modelcontextprotocol/server-everything`), only its read-only tools offered, a call to
    anything else refused, and the guard prompt present."""

    def script(request: dict[str, Any]) -> list[Any]:
        prompt = last_user(request)
        results = tool_messages(request)
        if prompt.startswith("You chair"):
            return [Say('{"stance": "approve", "decision": "Go.", "confidence": 0.6}')]
        if "You are advocate" in prompt and not results:
            return [Call("get-sum", {"a": 2, "b": 3}), Call("toggle-simulated-logging", {})]
        summary = "sum checked: " + " | ".join(str(r["content"]) for r in results)
        return [Say(json.dumps({"stance": "approve", "summary": summary, "confidence": 0.7}))]

    fake = FakeOpenAI(script)
    everything = node_bin("mcp-server-everything")
    (tmp_path / "mcp.json").write_text(
        json.dumps({"mcpServers": {"everything": {"command": str(everything), "args": []}}})
    )
    async with serve_fake(fake) as url:
        (tmp_path / "config.yaml").write_text(
            "max_rounds: 1\n"
            f"backend: {{model: fake-model, base_url: '{url}/v1', mcp_config: mcp.json}}\n"
        )
        code, out, err = await caucus("deliberate", "Ship?", "--json", cwd=tmp_path)
    assert code == 0, err
    offered = {t["function"]["name"] for t in fake.requests[0]["tools"]}
    assert "get-sum" in offered
    assert "toggle-simulated-logging" not in offered  # not marked read-only
    assert "read-only sources of evidence" in last_user(fake.requests[0])
    record = json.loads(out)["record"]
    advocate = record["positions"][0]["summary"]
    assert "The sum of 2 and 3 is 5" in advocate
    assert "'toggle-simulated-logging' is not an evidence tool here" in advocate
