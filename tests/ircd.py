"""A real IRC server for the IRC bridge tests: Debian's ngircd on a free loopback port, in a
folder of its own, started and stopped around the block. `./dev test` installs the package;
without it the tests skip, except under CI=true, where they fail."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CONFIG = """[Global]
\tName = irc.caucus.test
\tInfo = Caucus test IRC server
\tListen = 127.0.0.1
\tPorts = {port}
\tMotdPhrase = "Caucus tests"
[Limits]
\tMaxNickLength = 30
\tPingTimeout = 120
\tPongTimeout = 20
[Options]
\tPAM = no
\tIdent = no
\tDNS = no
"""


def ngircd() -> str:
    found = shutil.which("ngircd") or (
        "/usr/sbin/ngircd" if os.path.exists("/usr/sbin/ngircd") else None
    )
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("ngircd is missing: ./dev test installs Debian's ngircd package")
        pytest.skip("ngircd is not installed (./dev test installs it with apt-get)")
    return found


@contextlib.contextmanager
def irc_server() -> Iterator[tuple[str, int]]:
    binary = ngircd()
    folder = Path(tempfile.mkdtemp(prefix="caucus-ircd-"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    conf = folder / "ngircd.conf"
    conf.write_text(CONFIG.format(port=port), "utf-8")
    proc = subprocess.Popen(
        [binary, "-n", "-f", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("ngircd did not start") from None
                time.sleep(0.05)
        yield "127.0.0.1", port
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(folder, ignore_errors=True)
