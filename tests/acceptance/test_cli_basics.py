"""The small things a user meets first: versions, bad settings, a mistyped name, a ledger
that is not there, and `./dev` on its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from caucus import __version__
from caucus.client import HubClient
from caucus.protocol import PROTOCOL_VERSION
from tests.acceptance.hubproc import start_hub

ROOT = Path(__file__).resolve().parents[2]


def caucus(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CAUCUS_")}
    return subprocess.run(
        [sys.executable, "-m", "caucus", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**clean, **env},
    )


def test_the_version_is_one_flag_or_command_away() -> None:
    assert caucus("--version").stdout == f"{__version__}\n"
    shown = json.loads(caucus("version", "--json").stdout)
    assert shown == {"version": __version__, "protocol": PROTOCOL_VERSION}


async def test_the_hub_says_which_hub_it_is(url: str) -> None:
    async with HubClient(url) as client:
        info = await client.version()
    assert (info.name, info.version, info.protocol) == ("caucus", __version__, PROTOCOL_VERSION)


def test_a_bad_setting_is_one_line_naming_where_it_came_from(tmp_path: Path) -> None:
    out = caucus("settings", CAUCUS_PORT="eighty")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "error: CAUCUS_PORT: Input should be a valid integer" in out.stderr
    assert "(got 'eighty')" in out.stderr
    config = tmp_path / "caucus.toml"
    config.write_text('prot = 1\nlog_level = "debug"\n')
    out = caucus("settings", CAUCUS_CONFIG=str(config))
    assert out.returncode == 2
    assert f"error: prot in {config} is not a setting; did you mean port?" in out.stderr
    out = caucus("settings", CAUCUS_CONFIG=str(tmp_path / "nope.toml"))
    assert (out.returncode, "Traceback" in out.stderr) == (2, False)
    assert "no config file at" in out.stderr


def test_a_mistyped_variable_is_named_with_the_right_one() -> None:
    out = caucus("version", CAUCUS_PROT="9000")
    assert out.returncode == 0
    assert "CAUCUS_PROT is not a setting; did you mean CAUCUS_PORT?" in out.stderr


def test_verifying_a_ledger_that_is_not_there_says_so(tmp_path: Path) -> None:
    out = caucus("verify", str(tmp_path / "decisions.jsonl"))
    assert (out.returncode, out.stdout) == (2, "")
    assert "no ledger at" in out.stderr
    out = caucus("verify", str(tmp_path / "decisions.jsonl"), "--json")
    assert json.loads(out.stdout)["error"] == "not_found"


def test_dev_alone_prints_its_help_and_nothing_else() -> None:
    out = subprocess.run([str(ROOT / "dev")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    assert out.stdout.startswith("One entry point for people and CI:")
    assert "set -e" not in out.stdout
    wrong = subprocess.run([str(ROOT / "dev"), "frob"], capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2
    assert "no command 'frob'" in wrong.stderr


async def test_status_says_whether_a_hub_is_up_and_what_is_in_it(tmp_path: Path) -> None:
    hub = start_hub(tmp_path / "hub.db")
    try:
        async with HubClient(hub.url) as alice:
            await alice.register("alice")
            out = caucus("status", "--hub", hub.url, "--json", CAUCUS_HOME=str(tmp_path))
            report = json.loads(out.stdout)
            assert out.returncode == 0
            assert (report["up"], report["version"], report["peers"]) == (True, __version__, 1)
            assert report["room"] == "open"  # the operator token kept beside the database
            text = caucus("status", "--hub", hub.url, CAUCUS_HOME=str(tmp_path)).stdout
            assert f"hub at {hub.url}: up" in text
            assert "peers: 1 (1 online); room: open" in text
    finally:
        hub.stop()
    down = caucus("status", "--hub", hub.url, "--json", CAUCUS_HOME=str(tmp_path))
    assert (down.returncode, json.loads(down.stdout)["up"]) == (1, False)
    said = caucus("status", "--hub", hub.url, CAUCUS_HOME=str(tmp_path))
    assert "no hub is answering at" in said.stderr
