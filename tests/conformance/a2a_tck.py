"""The A2A TCK (`a2aproject/a2a-tck`) against the A2A door, run by hand: it cannot be installed in
CI, which reaches only the package registries (docs/conformance.md has the last run).

    git clone https://github.com/a2aproject/a2a-tck /tmp/a2a-tck
    (cd /tmp/a2a-tck && python3 -m venv .venv && .venv/bin/pip install -e .)
    .venv/bin/python -m tests.conformance.a2a_tck --tck /tmp/a2a-tck [--category all]

A hub on a fresh SQLite file, served on loopback (with `ROOM`'s settings); a caller `tck`
whose room token the TCK sends as its bearer; and one answering agent, `echo`, the one agent
besides the caller (so a standard client's message to the room's card goes to it, ADR 0038),
which works on each task it is handed as the TCK's own reference agent does: taken at once,
done a little later. Prints the TCK's summary and writes its compliance report to `--out`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path

from caucus.client import HubClient
from caucus.errors import CaucusError
from caucus.testing import make_hub, serve

WORK = 20.0  # seconds each task is worked on before it is done
LONG = 6.0  # a task whose text asks for it runs longer than twice the TCK's stream timeout
# The room's settings for the run: the TCK sends faster than a room lets one agent by
# default, and its ListTasks tests read a task back as `working` after a blocking send, which
# A2A 1.0 lets only a door that declares a bound on the wait (`a2a_wait_max`, ADR 0038).
ROOM = {"send_rate_capacity": 1000.0, "send_rate_refill": 1000.0, "a2a_wait_max": 1.0}


async def answer(agent: HubClient) -> None:
    """Take each task `agent` is handed (it is then working) and complete it with its text
    after `WORK` seconds (`LONG` for one about resubscribing or streaming, to be followed
    while it runs); ask a question first of one whose text asks for input."""
    loop = asyncio.get_running_loop()
    later: set[asyncio.Task[object]] = set()

    async def reply(task_id: str, text: str) -> None:
        with contextlib.suppress(CaucusError):  # canceled meanwhile: nothing to say
            await agent.reply_task(task_id, f"echo: {text}")

    def complete(task_id: str, text: str) -> None:
        done = asyncio.ensure_future(reply(task_id, text))
        later.add(done)
        done.add_done_callback(later.discard)

    while True:
        batch = await agent.receive(timeout=25)
        for item in batch.messages:
            if item.kind != "task":
                continue
            task_id = str((item.meta or {})["task_id"])
            text = item.content.lower()
            if "input" in text and "answer:" not in text:
                with contextlib.suppress(CaucusError):
                    await agent.request_input(task_id, "which one do you mean?")
                continue
            wait = LONG if ("resubscribe" in text or "stream" in text) else WORK
            loop.call_later(wait, complete, task_id, item.content)


async def run(tck: Path, category: str, out: Path) -> int:
    with tempfile.TemporaryDirectory() as folder:
        async with (
            make_hub(Path(folder), **ROOM) as hub,
            serve(hub) as url,
            HubClient(url) as echo,
            HubClient(url) as caller,
        ):
            await echo.register("echo", description="echoes what it is sent", skills=["echo"])
            token = (await caller.register("tck")).token
            answering = asyncio.create_task(answer(echo))
            env = {
                **os.environ,
                "A2A_AUTH_TYPE": "bearer",
                "A2A_AUTH_TOKEN": token,
                "TCK_STREAMING_TIMEOUT": "2.0",
            }
            report = out.with_suffix(".json")
            argv = [
                str(tck / ".venv" / "bin" / "python"),
                "run_tck.py",
                *("--sut-url", f"{url}/a2a", "--category", category),
                *("--compliance-report", str(report)),
            ]
            proc = await asyncio.create_subprocess_exec(*argv, cwd=tck, env=env)
            status = await proc.wait()
            answering.cancel()
            if report.exists():
                print(json.dumps(json.loads(report.read_text()).get("summary", {}), indent=2))
            return status


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.a2a_tck")
    parser.add_argument("--tck", type=Path, required=True, help="a checkout of a2aproject/a2a-tck")
    parser.add_argument("--category", default="all")
    parser.add_argument("--out", type=Path, default=Path("a2a-tck-report"))
    args = parser.parse_args()
    sys.exit(asyncio.run(run(args.tck.resolve(), args.category, args.out.resolve())))


if __name__ == "__main__":
    main()
