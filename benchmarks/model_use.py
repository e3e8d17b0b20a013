"""How well a small local model uses the room, and what it pays to: before and after issue 50.

Native agents (`caucus agent`) on the `llm` tier's model (Qwen2.5-Coder-0.5B behind
llama-cpp-python's server, built once into ~/.cache/caucus/llm) play scripted scenarios in a
hub of their own, each run N times, on this checkout and on an earlier revision (default
7bd1b70, before issue 50) in the same run:

- message: ann-bot sends bob-bot a word with `say`;
- reply: carol (a plain HTTP peer) asks ann-bot a question; ann-bot answers her, in its thread;
- task: ann-bot hands bob-bot a task with `task`; bob-bot's answer completes it;
- reserve: ann-bot reserves a file with `reservation`;
- search: ann-bot finds carol's note with `search` and tells carol;
- three: ann-bot asks everyone; bob-bot and cara-bot both answer.

The first model request of the agent a scenario is about is forced to call the scenario's tool
(`--start-with-tool`, as the llm tier's test does: a 0.5B model seldom calls a tool unasked), so
what is measured is whether the model calls it right and the room carries it through; the
earlier revision's native agents had no `reservation` or `search` to be forced to. Success is
read from the hub (the transcript, the reservations) and from the agents' own event
streams, never from the model's words. Every model request passes through a counting proxy;
the prompt each carried (the tool catalog and the conversation) is counted with the model's own
tokenizer (llama-cpp-python's `/extras/tokenize/count`; the chat template's few tokens aside).
Prints, per scenario and revision: successes out of N, prompt tokens per run (mean), and the
ratio of this checkout's tokens to the earlier revision's. A benchmark, not a test: a 0.5B
model's choices vary, and the figures are for comparing, in one run, on one machine.

Run: `.venv/bin/python benchmarks/model_use.py [--runs 3] [--before 7bd1b70] [--only reserve]`
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/llm.py's model server

from caucus.client import HubClient  # noqa: E402
from caucus.testing import serve_app  # noqa: E402
from llm import llama_server  # noqa: E402

TOKEN = secrets.token_urlsafe(24)  # the operator's, for every hub of this run
DEADLINE = 300.0  # seconds a run may take before it counts as a failure
QUIET = 20.0  # seconds with no agent event and no run open: the scenario has played out
ENDED = ("ThreadRunComplete", "ThreadRunFailed", "ThreadRunInterrupted")
TEAM = "You are {name}, an agent in a team chat with bob-bot, cara-bot and carol.\n"


@dataclass
class Room:
    """One run's hub, as the checks read it."""

    url: str
    carol: HubClient
    events: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    noted: dict[str, str] = field(default_factory=dict)  # what a setup sent, by name
    last_event: float = 0.0

    def settled(self, began: float) -> bool:
        """No run open in any agent, and nothing said for QUIET seconds."""
        kinds = [e.get("event") for events in self.events.values() for e in events]
        opened = kinds.count("NewThreadRunCreated")
        closed = sum(kinds.count(k) for k in ENDED)
        return opened == closed and time.monotonic() - max(self.last_event, began) > QUIET

    async def messages(self) -> list[dict[str, Any]]:
        """The whole transcript, as the operator exports it."""
        async with httpx2.AsyncClient() as http:
            answer = await http.get(
                f"{self.url}/export",
                params={"format": "json"},
                headers={"Authorization": f"Bearer {TOKEN}"},
                timeout=30,
            )
        answer.raise_for_status()
        body = answer.json()
        found = body.get("messages", body) if isinstance(body, dict) else body
        return [m for m in found if isinstance(m, dict)]

    async def sent(self, sender: str, to: str, kind: str | None = None) -> list[dict[str, Any]]:
        return [
            m
            for m in await self.messages()
            if m.get("sender") == sender
            and m.get("to") == to
            and (kind is None or m.get("kind", "chat") == kind)
        ]

    def called(self, agent: str, tool: str) -> bool:
        """Whether the agent's model called this tool (its own event stream says so)."""
        return any(
            call.get("name") == tool
            for event in self.events.get(agent, [])
            if event.get("event") == "NewThreadMessage"
            for call in event["message"].get("tool_calls") or ()
        )


Check = Callable[[Room], Awaitable[bool]]
Setup = Callable[[Room], Awaitable[None]]


@dataclass(frozen=True)
class Scenario:
    agents: dict[str, str]  # name -> what its On Start asks ("" for none)
    check: Check
    setup: Setup | None = None  # before the agents start
    joined: Setup | None = None  # once every agent is in the room
    forced: dict[str, str] = field(default_factory=dict)  # agent -> its first call's tool


async def _message(room: Room) -> bool:
    return bool(await room.sent("ann-bot", "bob-bot"))


async def _ask_ann(room: Room) -> None:
    sent = await room.carol.send("ann-bot", "What is 2 + 3? Answer me.")
    room.noted["question"] = sent.message_id


async def _reply(room: Room) -> bool:
    answers = await room.sent("ann-bot", "carol")
    return any(m.get("reply_to") == room.noted["question"] for m in answers)


async def _task(room: Room) -> bool:
    handed = await room.sent("ann-bot", "bob-bot", "task")
    return bool(handed) and bool(await room.sent("bob-bot", "ann-bot", "result"))


async def _reserve(room: Room) -> bool:
    listing = await room.carol.reservations(holder="ann-bot")
    return any(r.pattern == "src/app.py" for r in listing.reservations)


async def _note(room: Room) -> None:
    await room.carol.send("all", "Heads up: the deploy key rotates on Friday at noon.")


async def _search(room: Room) -> bool:
    return room.called("ann-bot", "search") and bool(await room.sent("ann-bot", "carol"))


async def _three(room: Room) -> bool:
    heard = [m for m in await room.messages() if m.get("to") in ("ann-bot", "all")]
    return {"bob-bot", "cara-bot"} <= {m.get("sender") for m in heard}


SCENARIOS: dict[str, Scenario] = {
    "message": Scenario(
        {"ann-bot": "Use the say tool to send bob-bot the word hello.", "bob-bot": ""},
        _message,
        forced={"ann-bot": "say"},
    ),
    "reply": Scenario({"ann-bot": ""}, _reply, joined=_ask_ann),
    "task": Scenario(
        {
            "ann-bot": "Use the task tool to send bob-bot the task: add 2 and 3.",
            "bob-bot": "",
        },
        _task,
        forced={"ann-bot": "task"},
    ),
    "reserve": Scenario(
        {"ann-bot": "You will edit src/app.py: reserve it first with the reservation tool."},
        _reserve,
        forced={"ann-bot": "reservation"},
    ),
    "search": Scenario(
        {
            "ann-bot": "Use the search tool to find what was said about the deploy key, then "
            "tell carol what you found with the say tool."
        },
        _search,
        setup=_note,
        forced={"ann-bot": "search"},
    ),
    "three": Scenario(
        {
            "ann-bot": "Use the say tool to ask all what 2 + 3 is.",
            "bob-bot": "",
            "cara-bot": "",
        },
        _three,
        forced={"ann-bot": "say"},
    ),
}


# --- the counting proxy ------------------------------------------------------------------------
class Proxy:
    """Passes the agents' requests to the model server, keeping each chat request's body."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.bodies: list[dict[str, Any]] = []
        self.app = Starlette(routes=[Route("/v1/{path:path}", self._pass, methods=["GET", "POST"])])
        self._http = httpx2.AsyncClient(timeout=None)

    async def _pass(self, request: Request) -> Response:
        body = await request.body()
        if request.url.path.endswith("/chat/completions"):
            self.bodies.append(json.loads(body))
        url = f"{self.upstream}/{request.path_params['path']}"
        outgoing = self._http.build_request(
            request.method, url, content=body, headers={"content-type": "application/json"}
        )
        answer = await self._http.send(outgoing, stream=True)

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for piece in answer.aiter_raw():
                    yield piece
            finally:
                await answer.aclose()

        kind = answer.headers.get("content-type", "application/json")
        return StreamingResponse(relay(), status_code=answer.status_code, media_type=kind)

    async def tokens(self, bodies: list[dict[str, Any]]) -> int:
        """The prompt tokens these requests carried, by the model's own tokenizer."""
        base = self.upstream.removesuffix("/v1")
        total = 0
        for body in bodies:
            text = json.dumps(body.get("tools", [])) + "".join(
                str(m.get("content") or "") + json.dumps(m.get("tool_calls") or [])
                for m in body.get("messages", [])
            )
            answer = await self._http.post(f"{base}/extras/tokenize/count", json={"input": text})
            answer.raise_for_status()
            total += int(answer.json()["count"])
        return total


# --- a run ---------------------------------------------------------------------------------------
def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@asynccontextmanager
async def hub_process(src: Path, folder: Path) -> AsyncIterator[str]:
    """`caucus hub` from `src`, on a fresh database, until it serves /protocol."""
    port = _port()
    env = {**_env(src), "CAUCUS_OPERATOR_TOKEN": TOKEN, "XDG_DATA_HOME": str(folder / "data")}
    with (folder / "hub.log").open("wb") as log:
        proc = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "caucus", "hub", "--port", str(port)),
            *("--db", str(folder / "caucus.db")),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx2.AsyncClient() as http:
            for _ in range(600):
                if proc.returncode is not None:
                    raise SystemExit(f"the hub from {src} exited; see {folder / 'hub.log'}")
                try:
                    if (await http.get(f"{url}/protocol", timeout=2)).status_code == 200:
                        break
                except httpx2.TransportError:
                    pass
                await asyncio.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 20)


def _env(src: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith("CAUCUS_")}
    return {**keep, "PYTHONPATH": str(src)}


async def _agent(
    src: Path, name: str, on_start: str, forced: str | None, urls: tuple[str, str], folder: Path
) -> asyncio.subprocess.Process:
    url, model_url = urls
    prompt = folder / f"{name}.md"
    text = TEAM.format(name=name) + "Answer messages in one short sentence.\n"
    if on_start:
        text += f"\n# On Start\n{on_start}\n"
    prompt.write_text(text, "utf-8")
    return await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "caucus", "agent", "--model", "qwen", "--base-url", model_url),
        *("--hub", url, "--name", name, "--prompt", str(prompt), "--temperature", "0"),
        *("--max-turns", "3", *(("--start-with-tool", forced) if forced else ())),
        cwd=str(folder),
        env={**_env(src), "XDG_STATE_HOME": str(folder / f"state-{name}")},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )


async def _read_events(proc: asyncio.subprocess.Process, room: Room, name: str) -> None:
    assert proc.stdout is not None
    while line := await proc.stdout.readline():
        try:
            room.events[name].append(json.loads(line))
        except ValueError:
            continue
        room.last_event = time.monotonic()


def tool_answers(room: Room) -> list[str]:
    """What each agent's tools answered, one line each (what a failed run is read by)."""
    lines = []
    for agent, events in room.events.items():
        for event in events:
            message = event.get("message") or {}
            if event.get("event") == "NewThreadMessage" and message.get("role") == "tool":
                said = " ".join(str(message.get("content", "")).split())[:140]
                lines.append(f"{agent} {message.get('name')}: {said}")
    return lines


async def one_run(
    scenario: Scenario, src: Path, model_url: str, folder: Path
) -> tuple[bool, list[str]]:
    """One scenario on a fresh hub: whether its check held before the deadline, and what the
    agents' tools answered."""
    async with hub_process(src, folder) as url, HubClient(url) as carol:
        await carol.register("carol")
        room = Room(url, carol)
        if scenario.setup is not None:
            await scenario.setup(room)
        procs = {}
        for name, on_start in scenario.agents.items():
            forced = scenario.forced.get(name)
            procs[name] = await _agent(src, name, on_start, forced, (url, model_url), folder)
            room.events[name] = []
        readers = [asyncio.ensure_future(_read_events(p, room, n)) for n, p in procs.items()]
        try:
            held = await _played(scenario, room, procs)
        finally:  # the agents run in sessions of their own: nothing else would end them
            for proc in procs.values():
                if proc.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        await asyncio.gather(*readers, return_exceptions=True)
        return held, tool_answers(room)


async def _played(
    scenario: Scenario, room: Room, procs: dict[str, asyncio.subprocess.Process]
) -> bool:
    """Whether the scenario's check holds, once the agents have played it out or time is up."""
    began = time.monotonic()
    if scenario.joined is not None:
        await _all_in(room.carol, set(procs), began)
        await scenario.joined(room)
    while time.monotonic() - began < DEADLINE:
        if await scenario.check(room):
            return True
        if all(p.returncode is not None for p in procs.values()) or room.settled(began):
            return await scenario.check(room)
        await asyncio.sleep(2)
    return False


async def _all_in(carol: HubClient, names: set[str], began: float) -> None:
    while not names <= {p.name for p in await carol.peers()}:
        if time.monotonic() - began > DEADLINE:
            raise SystemExit(f"{sorted(names)} did not all join within {DEADLINE:.0f} s")
        await asyncio.sleep(0.5)


# --- the benchmark -------------------------------------------------------------------------------
def checkout(revision: str, into: Path) -> Path:
    """`src/` as it was at `revision`, unpacked into `into`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


@dataclass
class Tally:
    held: int = 0
    runs: int = 0
    tokens: list[int] = field(default_factory=list)


async def measure(
    sources: dict[str, Path], names: list[str], runs: int, proxy: Proxy, model_url: str, tmp: Path
) -> dict[tuple[str, str], Tally]:
    tallies: dict[tuple[str, str], Tally] = {}
    for name in names:
        for label, src in sources.items():
            tally = tallies.setdefault((name, label), Tally())
            for n in range(runs):
                folder = tmp / f"{name}-{label}-{n}"
                folder.mkdir()
                first = len(proxy.bodies)
                began = time.monotonic()
                held, answers = await one_run(SCENARIOS[name], src, model_url, folder)
                tokens = await proxy.tokens(proxy.bodies[first:])
                tally.runs += 1
                tally.held += held
                tally.tokens.append(tokens)
                verdict = "held" if held else "failed"
                print(
                    f"  {name} on {label}, run {n + 1}/{runs}: {verdict}, "
                    f"{len(proxy.bodies) - first} requests, {tokens} prompt tokens, "
                    f"{time.monotonic() - began:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
                for line in answers if not held else ():
                    print(f"    {line}", file=sys.stderr, flush=True)
    return tallies


def report(tallies: dict[tuple[str, str], Tally], names: list[str], labels: list[str]) -> None:
    before, after = labels[-1], labels[0]
    print(f"{'scenario':<9} " + " ".join(f"{lab:>22}" for lab in labels) + "   tokens after/before")
    for name in names:
        cells, means = [], {}
        for label in labels:
            tally = tallies[(name, label)]
            means[label] = sum(tally.tokens) / max(len(tally.tokens), 1)
            cells.append(f"{tally.held}/{tally.runs} ok, {means[label]:>7.0f} tok")
        ratio = means[after] / means[before] if means[before] else float("nan")
        print(f"{name:<9} " + " ".join(f"{c:>22}" for c in cells) + f"   {ratio:.2f}x")
    for label in labels:
        held = sum(tallies[(n, label)].held for n in names)
        runs = sum(tallies[(n, label)].runs for n in names)
        print(f"{label}: {held}/{runs} runs held")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", default="7bd1b70", help="the revision to compare with")
    parser.add_argument("--only", action="append", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    names = args.only or list(SCENARIOS)
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        (tmp / "before").mkdir()
        # A copy: an edit to the checkout while this runs must not change what it measures.
        after = tmp / "after" / "src"
        shutil.copytree(ROOT / "src", after, ignore=shutil.ignore_patterns("__pycache__"))
        sources = {"this checkout": after, args.before: checkout(args.before, tmp / "before")}
        async with llama_server(tmp / "server.log") as llm_url:
            proxy = Proxy(llm_url)

            def config(app: Any) -> Any:
                import uvicorn

                return uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")

            async with serve_app(config, proxy.app) as proxy_url:
                tallies = await measure(sources, names, args.runs, proxy, f"{proxy_url}/v1", tmp)
    report(tallies, names, list(sources))


if __name__ == "__main__":
    asyncio.run(main())
