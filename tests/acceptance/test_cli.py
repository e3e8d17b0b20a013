"""`caucus hub` as a user starts it: flags, config file, printed paths, graceful signals."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest

from caucus.client import HubClient
from tests.acceptance.hubproc import start_hub
from tests.conftest import eventually

pytestmark = pytest.mark.slow


async def _listening(client: HubClient) -> bool:
    return (await client.ping(client.name or "")).listening


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_the_hub_shuts_down_gracefully_on_a_signal(tmp_path: Path, sig: int) -> None:
    hub = start_hub(tmp_path / "g.db")
    try:
        async with HubClient(hub.url) as alice:
            await alice.register("alice")
            await alice.set_status("here")
        assert hub.terminate(sig) == 0
        assert "Traceback" not in hub.stderr()
    finally:
        hub.stop()
    # The lock is released and the data is there for the next start.
    again = start_hub(tmp_path / "g.db")
    try:
        async with HubClient(again.url) as bob:
            await bob.register("bob")
            assert {p.name for p in await bob.peers()} == {"alice", "bob"}
    finally:
        again.stop()


async def test_a_parked_long_poll_does_not_hold_up_shutdown(tmp_path: Path) -> None:
    hub = start_hub(tmp_path / "p.db")
    try:
        async with HubClient(hub.url) as bob:
            await bob.register("bob")
            import asyncio

            parked = asyncio.create_task(bob.receive(timeout=25))
            await eventually(lambda: _listening(bob), what="bob listening")
            hub.send(signal.SIGTERM)
            batch = await asyncio.wait_for(parked, 20)  # answered at once, not after 25 s
            assert batch.messages == []
            assert hub.wait(20) == 0
    finally:
        hub.stop()


async def test_the_default_database_is_in_the_data_dir_and_printed(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "caucus", "hub", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"CAUCUS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        second = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in first
        assert f"database: {tmp_path / 'caucus.db'}" in second.replace("\n", "")
        url = first.split("listening on ")[1].strip()
        async with HubClient(url) as client:
            await client.wait_ready()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert (tmp_path / "caucus.db").exists(), err


def test_a_toml_config_file_is_read(tmp_path: Path) -> None:
    config = tmp_path / "caucus.toml"
    config.write_text(f'db = "{tmp_path / "from-config.db"}"\npeer_ttl = 42\n')
    out = subprocess.run(
        [sys.executable, "-m", "caucus", "settings", "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={"CAUCUS_CONFIG": str(config), "CAUCUS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert '"peer_ttl": 42.0' in out.stdout
    assert "from-config.db" in out.stdout


def test_bad_settings_fail_with_a_clear_message(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "caucus", "hub", "--port", "99999"],
        capture_output=True,
        text=True,
        env={"CAUCUS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 2
    assert "port" in out.stderr
    assert "Traceback" not in out.stderr


async def test_a_second_hub_on_the_same_database_refuses_to_start(tmp_path: Path) -> None:
    first = start_hub(tmp_path / "one.db")
    try:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "caucus",
                "hub",
                "--port",
                "0",
                "--db",
                str(tmp_path / "one.db"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env={"CAUCUS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        )
        assert out.returncode != 0
        assert "in use by another hub" in out.stderr
    finally:
        first.stop()


@pytest.mark.parametrize(
    "extra",
    [[], ["--operator-token", "cauop_configured-operator-token-0123456789"], ["--agent-key", "k"]],
)
def test_listening_beyond_loopback_needs_an_operator_token_and_an_agent_key(
    tmp_path: Path, extra: list[str]
) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "caucus", "hub", "--host", "0.0.0.0", "--port", "0", *extra],
        capture_output=True,
        text=True,
        timeout=60,
        env={"CAUCUS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 2
    assert "--operator-token" in out.stderr
    assert "--agent-key" in out.stderr
    assert "Traceback" not in out.stderr


async def test_no_credential_reaches_stdout_or_the_log_at_any_level(tmp_path: Path) -> None:
    """With the access log on and every logger at DEBUG, a run that uses an agent token, the
    operator token, MCP sessions and state handles, and secrets wrongly put into URLs under
    any parameter name, prints and logs none of them."""
    key_file = tmp_path / "agent-key"
    key_file.write_text("agent-key-from-a-file-0123\n")
    flags = ["--access-log", "--log-level", "debug", "--agent-key-file", str(key_file)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "caucus", "hub", "--port", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"CAUCUS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    minted: list[str] = ["agent-key-from-a-file-0123"]
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        proc.stdout.readline()  # database
        operator_line = proc.stdout.readline()
        url = first.split("listening on ")[1].strip()
        token = (tmp_path / "operator-token").read_text().strip()
        minted.append(token)
        # Not a terminal: where the token is, never the token.
        assert operator_line.startswith(f"operator: {url}/ (sign in with the operator token:")
        assert str(tmp_path / "operator-token") in operator_line
        async with HubClient(url, agent_key="agent-key-from-a-file-0123") as alice:
            await alice.wait_ready()
            await alice.register("alice")
            await alice.peers()
            await alice.receive(timeout=0)  # the lean lane's, logged as uvicorn's are
            assert alice.token is not None
            minted.append(alice.token)
            async with httpx2.AsyncClient(base_url=url) as http:
                for name in ("token", "t", "k", "x", "api_key", "q"):
                    await http.get(f"/peers?{name}={alice.token}&{name}2={token}&n=hunter22")
                await http.get("/operator/state", headers={"Authorization": f"Bearer {token}"})
                minted += await _mcp_credentials(http, "agent-key-from-a-file-0123")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    logged = out + err
    assert "GET /peers" in logged  # the access log is on
    assert '"GET /receive?timeout=0' in logged
    assert "session" in logged.lower()  # the MCP SDK's own DEBUG/INFO lines are in
    assert "[redacted]" in logged
    assert "hunter22" not in logged
    for secret in minted:
        assert secret not in logged, f"a credential was logged: {secret[:8]}..."


async def _mcp_credentials(http: httpx2.AsyncClient, key: str) -> list[str]:
    """Open an MCP session and join (a session id and a state handle), return both."""
    headers = {"Accept": "application/json, text/event-stream", "X-Caucus-Agent-Key": key}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "log-test", "version": "1"},
        },
    }
    opened = await http.post("/mcp", json=init, headers=headers)
    session = opened.headers["mcp-session-id"]
    headers["mcp-session-id"] = session
    await http.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    call = {"name": "join", "arguments": {"name": "logged"}}
    joined = await http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
        headers=headers,
    )
    handle = re.search(r'"handle"\s*:\s*"([^"]+)"', joined.text)
    assert handle is not None, joined.text
    await http.delete("/mcp", headers=headers)
    return [session, handle.group(1)]


def test_the_console_link_with_its_token_is_printed_only_to_a_terminal(tmp_path: Path) -> None:
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "caucus", "hub", "--port", "0"],
        stdout=secondary,
        stderr=subprocess.DEVNULL,
        env={"CAUCUS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "TERM": "dumb"},
    )
    os.close(secondary)
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while b"#token=" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([primary], [], [], 1)
            if ready:
                seen += os.read(primary, 4096)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        os.close(primary)
    token = (tmp_path / "operator-token").read_text().strip()
    assert f"#token={token}".encode() in seen


async def test_db_purge_works_on_a_file_and_through_a_running_hub(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    hub = start_hub(db)
    try:
        async with HubClient(hub.url) as alice, HubClient(hub.url) as bob:
            await alice.register("alice")
            await bob.register("bob")
            for n in range(10):  # the send budget's burst
                await alice.send("bob", f"message {n}")
            await bob.ack(through=(await bob.receive(timeout=5)).messages[-1].seq)
        caucus = [sys.executable, "-m", "caucus", "db", "purge", "--db", str(db)]
        env = {"CAUCUS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
        held = subprocess.run(caucus, capture_output=True, text=True, timeout=60, env=env)
        assert held.returncode == 2
        assert "--hub" in held.stderr  # what to do instead
        future = "2999-01-01T00:00:00Z"
        through = subprocess.run(
            [*caucus, "--hub", hub.url, "--before", future, "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert through.returncode == 0, through.stderr
        assert json.loads(through.stdout)["messages"] == 10
    finally:
        hub.terminate()
        hub.stop()
    dry = subprocess.run(
        [*caucus, "--before", future, "--dry-run"], capture_output=True, text=True, env=env
    )
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("would drop 0 messages")
