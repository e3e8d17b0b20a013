"""`caucus watch`: the zero-token listener a passive MCP host runs in the background.

It long-polls with the session's token (read from the session file the bridge writes, never from
the command line), prints the first batch that arrives (wrapped as untrusted data; operator
control messages also get a plain line of their own), acknowledges exactly what it printed, and
exits, so the host wakes its agent. A dead session prints one line and exits 1.
"""

from __future__ import annotations

import asyncio
import json
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from caucus.client import HubClient, InboundMessage
from caucus.domain.messages import ControlAction, MessageKind
from caucus.errors import HubUnavailable, Unauthorized
from caucus.files import replace_atomically
from caucus.mcp.envelope import wrap

EXPIRED = "session expired: call join again"
UNREACHABLE_AFTER = 30.0  # seconds of a hub that does not answer before giving up


@dataclass(frozen=True, slots=True)
class Session:
    hub: str
    name: str
    token: str


def write_session(path: Path, session: Session) -> None:
    """Write the session file with mode 0600 (created that way: never readable by others)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = {"hub": session.hub, "name": session.name, "token": session.token}
    replace_atomically(path, json.dumps(data).encode("utf-8"), mode=0o600)


def read_session(path: Path) -> Session:
    if stat.S_IMODE(path.stat().st_mode) & 0o077:
        raise PermissionError(f"{path} is readable by other users; it must be mode 0600")
    data = json.loads(path.read_text(encoding="utf-8"))
    return Session(str(data["hub"]), str(data["name"]), str(data["token"]))


def control_lines(messages: list[InboundMessage]) -> list[str]:
    """Plain lines for the operator's control messages (their fields come from the hub)."""
    actions = {a.value for a in ControlAction}
    out = []
    for m in messages:
        if m.kind == MessageKind.CONTROL and m.sender == "operator" and m.content in actions:
            out.append(f"[caucus] the operator says: {m.content}")
    return out


async def watch(session: Session, *, poll: float = 25.0, out: TextIO = sys.stdout) -> int:
    """Wait for the first batch, print it, acknowledge it; the exit status for the process."""
    loop = asyncio.get_running_loop()
    unreachable_since: float | None = None
    async with HubClient(session.hub, token=session.token) as client:
        while True:
            try:
                batch = await client.receive(timeout=poll, auto_ack=False)
            except Unauthorized:
                print(EXPIRED, file=out, flush=True)
                return 1
            except HubUnavailable as exc:
                now = loop.time()
                unreachable_since = unreachable_since or now
                if now - unreachable_since > UNREACHABLE_AFTER:
                    print(f"[caucus] {exc.detail}", file=sys.stderr, flush=True)
                    return 3
                await asyncio.sleep(1.0)
                continue
            unreachable_since = None
            if batch.superseded:
                print("[caucus] another listener took over this session", file=sys.stderr)
                return 0
            if not batch.messages:
                continue
            for line in control_lines(batch.messages):
                print(line, file=out)
            print(wrap(batch.messages, me=session.name), file=out, flush=True)
            # Acknowledge only after the batch is out: a watcher killed before this point
            # leaves it to come back, never to vanish.
            await client.ack(seqs=[m.seq for m in batch.messages])
            return 0
