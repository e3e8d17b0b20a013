"""Start `caucus hub` as a real subprocess for acceptance tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO


@dataclass
class HubProcess:
    proc: subprocess.Popen[str]
    url: str
    db: str

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def terminate(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.kill()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def start_hub(
    db: Path | str,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    fault: str | None = None,
    home: Path | None = None,
) -> HubProcess:
    """`db` is a SQLite file or a postgresql:// URL (then `home` holds the hub's own files,
    the operator token among them: processes given one home share it). `fault` names a kill
    point of tests/acceptance/faults.py to run the hub under."""
    if home is None:
        assert isinstance(db, Path), "a PostgreSQL hub needs a home folder"
        home = db.parent
    # Tests register many peers from one address in a moment (the flood tests check the
    # default budget); as caucus.testing.hub_settings does, these hubs allow it.
    full_env = {
        **os.environ,
        "CAUCUS_HOME": str(home),
        "CAUCUS_REGISTER_RATE_CAPACITY": "100000",
        "CAUCUS_SHIELD_CAPACITY": "1000000",
        "CAUCUS_STRANGER_RATE": "1000000",
        **(env or {}),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            *(["tests.acceptance.faults", fault] if fault else ["caucus"]),
            "hub",
            "--port",
            "0",
            "--db",
            str(db),
            "--json",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
    )
    assert proc.stdout is not None
    line = _readline(proc.stdout, timeout)
    if not line:
        err = proc.stderr.read() if proc.stderr else ""
        proc.kill()
        raise RuntimeError(f"caucus hub did not start: {err}")
    info = json.loads(line)
    return HubProcess(proc, info["url"], info["db"])


def _readline(stream: IO[str], timeout: float) -> str:
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(stream, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if sel.select(timeout=0.1):
                return stream.readline()
        return ""
    finally:
        sel.close()
