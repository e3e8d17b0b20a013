"""A live deliberation with the room's own agents, chaired by the operator in the console:
two MCP agents (the official SDK client on /mcp) and one native agent (`caucus agent` on the
scripted OpenAI-compatible fake) argue two rounds, a fourth panelist never answers and is
recorded as absent, the operator decides through the console's forms wizard, and the record
on the ledger carries the positions, the dissent and both rounds."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import expect

from caucus.services.hub import Hub
from caucus.testing import Call, FakeClock, FakeOpenAI, Say, last_user, make_hub, serve_fake
from tests import record_format
from tests.agentproc import AgentProcess
from tests.browser.conftest import PageFactory, shot
from tests.conftest import ClientFactory, eventually
from tests.mcptools import call
from tests.waiting import scaled

REQUEST = re.compile(r"Position request: deliberation (d_[0-9a-f]+), round (\d)")


def native_model(request: dict[str, Any]) -> list[Any]:
    """cy's model: a position request is answered with submit_position, then nothing more."""
    if request["messages"][-1]["role"] == "tool":
        return [Say("NO_REPLY")]
    asked = REQUEST.search(last_user(request))
    if asked is None:
        return [Say("NO_REPLY")]
    return [
        Call(
            "submit_position",
            {
                "deliberation": asked.group(1),
                "stance": "approve",
                "summary": f"cy, round {asked.group(2)}: the numbers hold up",
                "confidence": 0.7,
            },
        )
    ]


async def start_native(name: str, hub_url: str, model_url: str, tmp: Path) -> AgentProcess:
    prompt = tmp / f"{name}.md"
    prompt.write_text(f"You are {name}, a careful reviewer.\n", "utf-8")
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "caucus", "agent", "--model", "fake-model"),
        *("--base-url", f"{model_url}/v1", "--hub", hub_url, "--name", name),
        *("--prompt", str(prompt)),
        cwd=str(tmp),
        env={**os.environ, "XDG_STATE_HOME": str(tmp / f"state-{name}")},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    return AgentProcess(proc)


async def argue(client: Client, deliberation: str, stance: str, rounds: int) -> None:
    """An MCP agent answering each position request it receives, `rounds` times."""
    for number in range(1, rounds + 1):
        async with asyncio.timeout(scaled(30)):
            while True:
                heard = await call(client, "listen", timeout=5)
                asked = [
                    m
                    for m in heard["messages"]
                    if m["kind"] == "task" and m["thread"] == deliberation
                ]
                if asked:
                    break
        await call(
            client,
            "submit_position",
            deliberation=deliberation,
            stance=stance,
            summary=f"{stance}, round {number}",
            confidence=0.8 if stance == "approve" else 0.65,
        )


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def live_hub(tmp_path: Path, clock: FakeClock) -> AsyncIterator[Hub]:
    """The hub on a clock the test moves: dee misses its deadline when the test says, and
    nobody else can miss one however slowly the machine runs."""
    async with make_hub(tmp_path, clock=clock, send_rate_capacity=1000) as h:
        yield h


async def test_agents_deliberate_live_and_the_operator_chairs_in_the_console(
    open_console: PageFactory,
    live_hub: Hub,
    clock: FakeClock,
    url: str,
    connect: ClientFactory,
    tmp_path: Path,
) -> None:
    fake = FakeOpenAI(native_model)
    page = await open_console(live_hub.operator.token)
    await connect("dee")  # joins, and never answers
    async with (
        serve_fake(fake) as model_url,
        Client(f"{url}/mcp", mode="legacy") as lead,
        Client(f"{url}/mcp", mode="legacy") as ann,
        Client(f"{url}/mcp", mode="legacy") as ben,
    ):
        cy = await start_native("cy", url, model_url, tmp_path)
        for client, name in ((lead, "lead"), (ann, "ann"), (ben, "ben")):
            await call(client, "join", name=name)

        async def cy_joined() -> bool:
            return "cy" in {p.name for p in await live_hub.registry.peers()}

        await eventually(cy_joined, within=30, what="the native agent joined")
        convened = await call(
            lead,
            "convene",
            subject="Adopt PostgreSQL for the shared deployment?",
            panel=["ann", "ben", "cy", "dee"],
            evidence=[{"source": "benchmarks", "ref": "scaleout.txt"}],
            rounds=2,
            deadline=10,
        )
        d = convened["deliberation_id"]
        assert convened["panel"] == ["ann", "ben", "cy", "dee"]

        await page.locator("[data-tab=decisions]").click()
        card = page.locator(f"[data-deliberation={d}]")
        await expect(card).to_contain_text("Adopt PostgreSQL")

        async def dee_misses_round_one() -> None:
            async def others_answered() -> bool:
                seats = live_hub.deliberations.get(d).panel
                return all(1 in seat.answered for seat in seats if seat.name != "dee")

            await eventually(others_answered, within=30, what="round 1's other answers")
            clock.advance(10)

        await asyncio.gather(
            argue(ann, d, "approve", 2), argue(ben, d, "reject", 2), dee_misses_round_one()
        )
        await expect(card.locator("[data-panelist=dee]")).to_contain_text("absent")
        await expect(card.locator("[data-position=ben]")).to_contain_text("reject, round 2")
        await expect(card).to_contain_text("chair deciding")
        await page.screenshot(path=shot("deliberation-deciding"), full_page=True)

        # The operator chairs: the form waits in Forms.
        await page.locator("[data-tab=forms]").click()
        form = page.locator("[data-form]")
        await expect(form).to_contain_text(f"Chair {d}")
        await form.get_by_role("button", name="Answer").click()
        wizard = page.get_by_role("dialog")
        await wizard.get_by_label("approve").check()
        await wizard.get_by_role("button", name="Next").click()
        await wizard.locator("textarea[name=decision]").fill("Adopt it behind a flag.")
        await wizard.get_by_role("button", name="Next").click()
        await wizard.get_by_label("80%").check()
        await wizard.get_by_role("button", name="Review").click()
        await wizard.get_by_role("button", name="Send answer").click()
        await expect(wizard).to_have_count(0)

        await page.locator("[data-tab=decisions]").click()
        await expect(card).to_contain_text("Adopt it behind a flag. (80%) · dissent: ben")
        await expect(card).to_contain_text("record")
        await page.screenshot(path=shot("deliberation-decided"), full_page=True)

        await live_hub.control.stop()
        code, stderr = await cy.finish()
        assert code == 0, stderr

    records = [json.loads(line) for line in live_hub.decisions.path.read_text().splitlines()]
    record = next(r for r in records if r.get("caucus", {}).get("deliberation") == d)
    assert record["schema_version"] == "0.2"
    assert [p["agent"] for p in record["positions"]] == ["ann", "ben", "cy"]
    assert [p["agent"] for p in record["dissent"]] == ["ben"]
    assert len(record["rounds"]) == 2
    assert record["rounds"][1][2]["summary"] == "cy, round 2: the numbers hold up"
    assert record["absent"] == ["dee"]
    assert (record["decision"], record["confidence"], record["chair"]) == (
        "Adopt it behind a flag.",
        0.8,
        "operator",
    )
    assert record_format.verify(live_hub.decisions.path)[1] is True
