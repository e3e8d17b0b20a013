"""A real IRC server for the IRC bridge tests: Debian's ngircd on a free loopback port, in a
folder of its own, started and stopped around the block. `./dev test` installs the package;
without it the tests skip, except under CI=true, where they fail."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import Helper
from tests.waiting import eventually_sync

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
    server = Helper("ngircd", [binary, "-n", "-f", str(conf)], log=folder / "ngircd.log")

    def answers() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    try:
        eventually_sync(answers, within=10, what="ngircd to listen")
        yield "127.0.0.1", port
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
