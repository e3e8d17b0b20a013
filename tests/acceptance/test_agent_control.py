"""The operator's control, obeyed by a native agent on a real hub: an interrupt mid-run (the
fake model stalls its stream) ends the run at once and posts nothing; a reset starts the next
turn from a clean history (the model sees it); a pause holds the next run until resume (the
hub's order of messages shows it: no answer before the resume); the
status says "composing a reply" while a run is under way, "interrupted" after an interrupt,
and clears on the reset; a stop to this one agent ends the
process with exit 0."""

from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from caucus.client import HubClient
from caucus.operator_client import OperatorClient
from caucus.testing import FakeOpenAI, Say, Stall, last_user, make_hub, serve, serve_fake
from tests.acceptance.test_agent_hub import start_agent
from tests.conftest import eventually


def model(request: dict[str, Any]) -> list[Any]:
    said = last_user(request)
    if "prompt:on-start" in said:
        return [Say("NO_REPLY")]
    if "a long job" in said:
        return [Say("Working on it: part one, "), Stall(120), Say("part two.")]
    return [Say(f"turn with {len(request['messages'])} messages")]


async def test_interrupt_reset_pause_status_and_stop_are_obeyed(tmp_path: Path) -> None:
    fake = FakeOpenAI(model)
    async with (
        make_hub(tmp_path / "hub") as hub,
        serve(hub) as url,
        serve_fake(fake) as model_url,
        HubClient(url) as carol,
        OperatorClient(url, token=hub.operator.token) as operator,
    ):
        await carol.register("carol")
        worker = await start_agent("worker", url, model_url, tmp_path)
        await worker.until("ThreadRunComplete")  # On Start

        async def status() -> str:
            return (await carol.ping("worker")).status

        await carol.send("worker", "please do a long job")
        # The run under way, as the agent itself says: the hub's status may still show the
        # On Start run's "composing a reply" for a moment, and an interrupt sent before this
        # run starts has nothing to end.
        await worker.until("NewThreadRunCreated", 2)
        await eventually(
            lambda: _is(status(), "composing a reply"), within=20, what="the run's status"
        )
        await operator.interrupt("worker", reason="not now")
        interrupted = await worker.until("ThreadRunInterrupted")
        assert interrupted["reason"] == "not now"
        # The agent hung up on the stalled answer: a model server would otherwise generate
        # on for it (llama.cpp's notices only a closed connection), keeping the room's other
        # agents waiting behind a reply nobody reads.
        await eventually(lambda: _none(fake), within=20, what="the model's stream to close")
        assert fake.abandoned == 1
        await eventually(
            lambda: _is(status(), "interrupted"), within=20, what="the interrupted run state"
        )
        await operator.reset_peer("worker")
        await worker.until("ThreadReset")
        await eventually(lambda: _is(status(), ""), within=20, what="the status to clear")
        await carol.send("worker", "fresh start?")
        answer = await carol.receive(timeout=20)
        # System prompt and the one new message: the history before the reset is gone. And
        # nothing came before it: not even the part streamed before the interrupted stall.
        assert [m.content for m in answer.messages] == ["turn with 2 messages"]

        await operator.pause_peer("worker")
        await carol.send("worker", "held?")
        # The hub orders every message: a note written before the resume comes before any
        # answer the worker gives after it, and after one it would have given while paused.
        await operator.say("carol", "resuming the worker")
        await operator.resume_peer("worker")
        heard: list[str] = []
        for _ in range(3):  # the note, then the answer: at most a receive each, and a spare
            heard += [m.content for m in (await carol.receive(timeout=20)).messages]
            if "turn with 4 messages" in heard:
                break
        assert heard == ["resuming the worker", "turn with 4 messages"]

        # The operator stops this one agent; the room stays open for everyone else.
        await operator.stop_peer("worker", reason="that will do")
        code, stderr = await worker.finish()
        assert code == 0, stderr
        assert (await operator.state()).mode == "open"


async def _none(fake: FakeOpenAI) -> bool:
    return fake.streaming == 0


async def _is(value: Awaitable[str], wanted: str) -> bool:
    return await value == wanted
