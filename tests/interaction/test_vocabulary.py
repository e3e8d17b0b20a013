"""One vocabulary on the wire (issue 30, ADR 0023): what a party writes for others is
`content`, a task's answer `result`, its failure `error`, its question `question`, a claim's
reason `note`, on HTTP, MCP, the client and the console alike; `payload`, the name some HTTP
routes used before, is still read for one release (deprecated), and a wire model reads it from
an older hub."""

from __future__ import annotations

from typing import Any

import httpx2
from mcp import Client

from caucus.wire.work import OfferInfo, TaskInfo
from tests.conftest import ClientFactory

WORDS = {"content", "result", "error", "question", "note"}


def properties(schema: dict[str, Any]) -> set[str]:
    return set(schema.get("properties", {}))


async def test_http_and_mcp_name_the_same_things_the_same_way(url: str) -> None:
    async with httpx2.AsyncClient(base_url=url) as http:
        openapi = (await http.get("/openapi.json")).json()

    def body(path: str) -> set[str]:
        post = openapi["paths"][path]["post"]
        schema = post["requestBody"]["content"]["application/json"]["schema"]
        # An optional body is "anyOf: [the model, null]".
        schema = next((s for s in schema.get("anyOf", []) if "$ref" in s), schema)
        if "$ref" in schema:
            schema = openapi["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
        return properties(schema)

    http = {
        "task send": body("/tasks") & WORDS,
        "task reply": body("/tasks/{task_id}/reply") & WORDS,
        "task fail": body("/tasks/{task_id}/fail") & WORDS,
        "task ask": body("/tasks/{task_id}/input") & WORDS,
        "offer post": body("/offers") & WORDS,
        "offer claim": body("/offers/{offer_id}/claim") & WORDS,
        "announce": body("/announce") & WORDS,
    }
    assert http == {
        "task send": {"content"},
        "task reply": {"result"},
        "task fail": {"error"},
        "task ask": {"question"},
        "offer post": {"content"},
        "offer claim": {"note"},
        "announce": {"content"},
    }
    async with Client(f"{url}/mcp") as client:
        tools = {t.name: properties(t.input_schema) for t in (await client.list_tools()).tools}
    assert WORDS & tools["task"] == {"content", "result", "error", "question"}
    assert WORDS & tools["offer"] == {"content", "note"}
    assert WORDS & tools["announce"] == {"content"}
    assert WORDS & tools["say"] == {"content"}
    assert "text" not in tools["task"] | tools["offer"] | tools["announce"]


async def test_the_old_payload_is_still_read_and_answered_as_content(
    url: str, connect: ClientFactory
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    auth = {"Authorization": f"Bearer {alice.token}"}
    async with httpx2.AsyncClient(base_url=url, headers=auth) as http:
        old = await http.post("/tasks", json={"to": "bob", "payload": "the old way"})
        new = await http.post("/tasks", json={"to": "bob", "content": "the new way"})
        offer = await http.post("/offers", json={"payload": "an old offer"})
        # bob's: one sender's announcements are paced (the offer was alice's)
        bobs = {"Authorization": f"Bearer {bob.token}"}
        news = await http.post("/announce", json={"payload": "old news"}, headers=bobs)
    assert [r.status_code for r in (old, new, offer, news)] == [200, 200, 200, 200]
    assert (old.json()["content"], new.json()["content"]) == ("the old way", "the new way")
    assert "payload" not in old.json()
    assert offer.json()["content"] == "an old offer"
    assert {t.content for t in await alice.list_tasks("sent")} == {"the old way", "the new way"}


def test_a_wire_model_reads_what_an_older_hub_wrote() -> None:
    old_task = {
        **{"task_id": "t_1", "sender": "a", "worker": "b", "subject": None, "payload": "w"},
        **{"thread": "t_1", "state": "pending", "a2a_state": "submitted", "created_at": 1.0},
        **{"updated_at": 1.0, "expires_at": 2.0, "result": None, "error": None},
        **{"question": None, "answer": None, "history": []},
    }
    assert TaskInfo.model_validate(old_task).content == "w"
    old_offer = {
        **{"offer_id": "o_1", "poster": "a", "subject": None, "payload": "w", "state": "open"},
        **{"required_skills": [], "created_at": 1.0, "updated_at": 1.0, "expires_at": 2.0},
        **{"winner": None, "task_id": None, "claims": []},
    }
    assert OfferInfo.model_validate(old_offer).content == "w"
