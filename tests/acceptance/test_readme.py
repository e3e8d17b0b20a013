"""README.md tells the truth: its commands and examples run as written."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from caucus.ledger.chain import append
from caucus.services.hub import Hub
from tests.acceptance.test_ledger import decision
from tests.waiting import within

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def block_with(text: str) -> str:
    """The one sh block of the README that contains `text`."""
    (block,) = [b for b in code_blocks("sh") if text in b]
    return block


def test_the_readme_opens_with_the_two_commands_and_ci_runs_the_second() -> None:
    first = code_blocks("sh")[0].strip().splitlines()
    assert first[0].startswith("./dev hub")
    assert first[1].startswith("./dev test")
    assert "./dev test" in (ROOT / ".ci" / "run").read_text()
    dev = (ROOT / "dev").read_text()
    assert "hub)" in dev
    assert "test)" in dev


async def run(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await within(
        proc.communicate(stdin.encode() if stdin else None), 60, "the process to end"
    )
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_the_curl_walkthrough_works_as_written(url: str) -> None:
    script = block_with("ALICE=$(curl").replace("HUB=http://127.0.0.1:8765", f"HUB={url}")
    for _ in range(2):  # it leaves at the end, so running it again works too
        code, out, err = await run("bash", "-euo", "pipefail", "-c", script)
        assert code == 0, err
        assert '"delivered_to":["bob"]' in out
        assert "can you review the migration?" in out
        assert '"pending":1' in out
        assert '"left":true' in out


async def test_the_python_example_works_as_written(url: str) -> None:
    (example,) = code_blocks("python")
    for _ in range(2):
        code, out, err = await run(
            sys.executable, "-c", example.replace("http://127.0.0.1:8765", url)
        )
        assert code == 0, err
        assert "alice can you review the migration?" in out


def test_every_documented_link_points_at_a_file() -> None:
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        if target.startswith("http"):
            continue
        assert (ROOT / target).exists(), target


async def test_the_operator_walkthrough_works_as_written(
    url: str, live_hub: Hub, tmp_path: Path
) -> None:
    token_file = tmp_path / "operator-token"
    token_file.write_text(live_hub.operator.token + "\n")
    script = (
        block_with("/operator/pause")
        .replace("~/.local/share/caucus/operator-token", str(token_file))
        .replace("http://127.0.0.1:8765", url)
        .replace("curl -sN", "curl -sN --max-time 2")
        .replace("# live feed", "|| true  # live feed")
    )
    code, out, err = await run("bash", "-eu", "-c", script)
    assert code == 0, err
    assert '"mode":"paused"' in out
    assert '"mode":"open"' in out
    assert "event: snapshot" in out
    assert "hold on, reviewing" in out  # in the feed's snapshot and in the export


async def test_the_ledger_check_works_as_written(tmp_path: Path) -> None:
    (block,) = [b for b in code_blocks("sh") if "caucus verify" in b]
    ledger = tmp_path / "decisions.jsonl"
    append(ledger, decision(0))
    script = block.replace("~/.local/share/caucus/decisions.jsonl", str(ledger)).replace(
        "./dev caucus", f"{sys.executable} -m caucus"
    )
    code, out, err = await run("bash", "-eu", "-c", script)
    assert code == 0, err
    assert "intact: 1 records, anchored" in out


async def test_the_forms_walkthrough_works_as_written(
    url: str, live_hub: Hub, tmp_path: Path
) -> None:
    (block,) = [b for b in code_blocks("sh") if "/forms" in b]
    token_file = tmp_path / "operator-token"
    token_file.write_text(live_hub.operator.token + "\n")
    script = block.replace("~/.local/share/caucus/operator-token", str(token_file)).replace(
        "http://127.0.0.1:8765", url
    )
    code, out, err = await run("bash", "-euo", "pipefail", "-c", script)
    assert code == 0, err
    assert '"title":"Ship on Friday?"' in out
    assert '"state":"answered"' in out
    assert '"kind":"form_answer"' in out
    assert '"decision":"Ship it: yes; Why: tests are green"' in out


async def test_the_native_agent_example_runs_as_written() -> None:
    (line,) = [x for x in block_with("--backend mock").splitlines() if "--backend mock" in x]
    command = line.split("#")[0].replace("caucus agent", f"{sys.executable} -m caucus agent")
    code, out, err = await run("bash", "-euo", "pipefail", "-c", command)
    assert code == 0, err
    replies = [e for e in out.splitlines() if '"ThreadRunComplete"' in e]
    assert replies
    assert "What can you do?" in replies[-1]
