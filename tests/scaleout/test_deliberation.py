"""A deliberation runs in the hub process that convened it (ADR 0019), and everything else of
it may happen on another: panelists answering there (one through submit_position, one with a
plain task reply) and the operator chairing there. The driver waits on the convener's
wake-ups, not on a timer, so this holds only if those wake-ups cross processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caucus.client import HubClient
from caucus.operator_client import OperatorClient
from caucus.wire.deliberations import DeliberationInfo
from caucus.wire.messages import InboundMessage
from tests.conftest import eventually
from tests.scaleout.conftest import Room, operator_token

pytestmark = pytest.mark.slow


async def request_for(client: HubClient, deliberation: str) -> InboundMessage:
    found: list[InboundMessage] = []

    async def arrived() -> bool:
        found.extend(
            m
            for m in (await client.receive(timeout=1)).messages
            if m.kind == "task" and m.thread == deliberation
        )
        return bool(found)

    await eventually(arrived, within=30, what=f"a request of {deliberation}")
    return found[0]


async def test_a_deliberation_convened_on_one_process_is_answered_and_chaired_on_another(
    room: Room, tmp_path: Path
) -> None:
    a, b = room(2)
    async with (
        HubClient(a.url) as lead,
        HubClient(b.url) as ann,
        HubClient(b.url) as ben,
        OperatorClient(b.url, token=operator_token(tmp_path)) as operator,
    ):
        for client, name in ((lead, "lead"), (ann, "ann"), (ben, "ben")):
            await client.register(name)
        # A deadline the whole test fits in many times over, yet far short of the default:
        # a panelist whose answer the driver never hears of is marked absent, and fails this.
        convened = await lead.convene("Ship it?", ["ann", "ben"], rounds=1, deadline=60)
        d = convened.deliberation_id
        await request_for(ann, d)
        await ann.submit_position(d, "approve", "green on both backends", 0.9)
        asked = await request_for(ben, d)
        assert asked.meta is not None
        answer = {"stance": "approve", "summary": "no regressions", "confidence": 0.7}
        await ben.reply_task(asked.meta["task_id"], json.dumps(answer))

        chair_forms: list[str] = []

        async def chair_asked() -> bool:
            chair_forms[:] = [f.form_id for f in await operator.forms() if d in f.title]
            return bool(chair_forms)

        await eventually(chair_asked, within=30, what="the operator asked to chair")
        decision = {"stance": "approve", "decision": "Ship it today.", "confidence": "80%"}
        await operator.answer_form(chair_forms[0], decision)

        found: list[DeliberationInfo] = []

        async def decided() -> bool:
            found[:] = [await lead.deliberation(d)]
            return found[0].state in ("decided", "failed")

        await eventually(decided, within=30, what=f"{d} decided")
        done = found[0]
        assert done.state == "decided", done.error
        assert [p.name for p in done.panel if p.absent] == []
        assert [sorted(p.agent for p in r) for r in done.rounds] == [["ann", "ben"]]
        assert done.verdict is not None
        assert (done.verdict.decision, done.verdict.confidence) == ("Ship it today.", 0.8)
