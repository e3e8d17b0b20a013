"""`caucus hub` as a user starts it: flags, config file, printed paths, graceful signals."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

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
        assert hub.proc.stderr is not None
        assert "Traceback" not in hub.proc.stderr.read()
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
            hub.proc.send_signal(signal.SIGTERM)
            batch = await asyncio.wait_for(parked, 20)  # answered at once, not after 25 s
            assert batch.messages == []
            assert hub.proc.wait(timeout=20) == 0
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


async def test_the_operator_url_is_printed_and_no_credential_reaches_the_log(
    tmp_path: Path,
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "caucus", "hub", "--port", "0", "--access-log"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"CAUCUS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        proc.stdout.readline()  # database
        operator_line = proc.stdout.readline()
        url = first.split("listening on ")[1].strip()
        token = (tmp_path / "operator-token").read_text().strip()
        assert operator_line.strip() == f"operator: {url}/#token={token}"
        async with HubClient(url) as alice:
            await alice.wait_ready()
            await alice.register("alice")
            await alice.peers()
            # A client that wrongly puts secrets in the URL: refused, and never logged.
            import httpx2

            async with httpx2.AsyncClient(base_url=url) as http:
                await http.get(f"/peers?token={alice.token}&api_key=hunter2")
                await http.get("/operator/state", headers={"Authorization": f"Bearer {token}"})
            agent_token = alice.token
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    logged = out + err
    assert "GET /peers" in logged  # the access log is on
    assert "[redacted]" in logged
    assert agent_token is not None
    assert agent_token not in logged
    assert token not in logged
    assert "hunter2" not in logged
