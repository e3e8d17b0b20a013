"""What the hub writes is private, and no credential it minted is anywhere it writes: the data
directory is 0700; the database (with its -wal and -shm), the ledger, the transcript and the
token file 0600; and a grep of every file, every export, the log and stdout finds none of the
agent tokens, state handles, MCP session ids or the operator token of a busy run."""

from __future__ import annotations

import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from caucus.client import HubClient
from caucus.operator_client import OperatorClient
from tests.acceptance.test_cli import _mcp_credentials

pytestmark = pytest.mark.slow

FLAGS = ["--access-log", "--log-level", "debug", "--transcript"]
FORM = [{"key": "go", "type": "radio", "options": ["yes", "no"]}]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_files_are_private_and_no_minted_credential_is_written_anywhere(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    transcript = tmp_path / "logs" / "transcript.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "caucus", "hub", "--port", "0", *FLAGS, str(transcript)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"CAUCUS_HOME": str(home), "PATH": "/usr/bin:/bin", "CAUCUS_SEND_RATE_CAPACITY": "100"},
    )
    minted: list[str] = []
    exported: list[str] = []
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "listening on " in first, first + (proc.stderr.read() if proc.poll() else "")
        url = first.split("listening on ")[1].strip()
        operator_token = (home / "operator-token").read_text().strip()
        minted.append(operator_token)
        async with HubClient(url) as alice, HubClient(url) as bob:
            await alice.wait_ready()
            await alice.register("alice")
            await bob.register("bob")
            assert alice.token is not None
            assert bob.token is not None
            minted += [alice.token, bob.token]
            for n in range(5):
                await alice.send("bob", f"note {n}")
            task = await alice.send_task("bob", "do it")
            await bob.receive(timeout=2)
            await bob.reply_task(task.task_id, "done")
            form = await alice.ask_operator("ship?", FORM)
            async with OperatorClient(url, token=operator_token) as op:
                await op.answer_form(form.form_id, {"go": "yes"})
                async with httpx2.AsyncClient(base_url=url) as http:
                    minted += await _mcp_credentials(http, "")
                    auth = {"Authorization": f"Bearer {operator_token}"}
                    for fmt in ("json", "markdown", "text"):
                        exported.append(
                            (await http.get(f"/export?format={fmt}", headers=auth)).text
                        )
                    exported.append((await http.get("/operator/snapshot", headers=auth)).text)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert _mode(home) == 0o700
    database = home / "caucus.db"
    for path in [database, home / "operator-token", home / "decisions.jsonl", transcript]:
        assert path.exists(), path
        assert _mode(path) == 0o600, (path, oct(_mode(path)))
    for sidecar in home.glob("caucus.db-*"):
        assert _mode(sidecar) == 0o600, sidecar
    written = {
        p: p.read_bytes() for p in [*home.rglob("*"), *transcript.parent.rglob("*")] if p.is_file()
    }
    assert len(written) >= 5
    texts = {"stdout": out, "stderr": err, **{f"export {n}": t for n, t in enumerate(exported)}}
    for secret in minted:
        needle = secret.encode()
        for path, data in written.items():
            if path.name == "operator-token":
                continue  # the one place it is kept, 0600, by design
            assert needle not in data, f"{secret[:8]}... found in {path}"
        for where, text in texts.items():
            assert secret not in text, f"{secret[:8]}... found in {where}"
    assert re.search(r"GET /peers|POST /register", err)  # the log really was written
