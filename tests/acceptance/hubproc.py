"""Start `caucus hub` as a real subprocess for acceptance tests: a `Helper` in its own process
group, its stderr in a log file (a pipe nobody reads fills and stalls the hub), so a hub that
dies unasked fails the test waiting on it, naming its exit and the end of its log."""

from __future__ import annotations

import json
import os
import selectors
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tests.processes import Helper, HelperDied, log_path
from tests.waiting import scaled


@dataclass
class HubProcess:
    helper: Helper
    url: str
    db: str

    @property
    def pid(self) -> int:
        return self.helper.pid

    def kill(self) -> None:
        """SIGKILL, as a crash would: no shutdown, no flush."""
        self.helper.signal(signal.SIGKILL)
        self.helper.proc.wait(timeout=scaled(30))

    def send(self, sig: int) -> None:
        """Send `sig` to the hub (a death asked for)."""
        self.helper.signal(sig)

    def terminate(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        self.helper.signal(sig)
        return self.wait(timeout)

    def wait(self, timeout: float = 30) -> int:
        return self.helper.proc.wait(timeout=scaled(timeout))

    def stderr(self) -> str:
        """What the hub wrote to stderr so far."""
        return self.helper.tail(1 << 20)

    def stop(self) -> None:
        self.helper.stop()


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
    point of tests/acceptance/faults.py to run the hub under (it may then end by itself)."""
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
    helper = Helper(
        "caucus hub",
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
        log=log_path("hub"),
        env=full_env,
        stdout_pipe=True,
        text=True,
        expect_exit=fault is not None,
    )
    assert helper.proc.stdout is not None
    line = _readline(helper, helper.proc.stdout, scaled(timeout))
    if not line:
        helper.stop()
        raise RuntimeError(f"caucus hub did not start in {scaled(timeout):.0f} s: {helper.tail()}")
    info = json.loads(line)
    return HubProcess(helper, info["url"], info["db"])


def _readline(helper: Helper, stream: IO[str], timeout: float) -> str:
    sel = selectors.DefaultSelector()
    sel.register(stream, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if sel.select(timeout=0.1):
                line = stream.readline()
                if not line:  # stdout closed: the hub is ending
                    helper.proc.wait(scaled(10))
                    story = helper.death() or "caucus hub ended before it printed its address"
                    helper.stop()
                    raise HelperDied(story)
                return line
        return ""
    finally:
        sel.close()
