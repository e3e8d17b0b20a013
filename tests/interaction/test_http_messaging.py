"""Two (or three) agents over real HTTP with HubClient: the everyday paths and their errors."""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from caucus.client import HubClient
from caucus.errors import (
    Forbidden,
    InvalidRequest,
    NameInUse,
    NotFound,
    PayloadTooLarge,
    Unauthorized,
)
from caucus.services.hub import Hub
from tests.conftest import ClientFactory, eventually


async def test_register_returns_a_long_random_token_and_the_protocol(
    connect: ClientFactory,
) -> None:
    alice = await connect()
    reg = await alice.register("alice", skills=["python"], description="writes code")
    assert reg.outcome == "created"
    assert reg.token.startswith("cau_")
    assert len(reg.token) >= 4 + 43  # 32 random bytes, url-safe base64
    assert reg.protocol is not None
    assert "receive" in reg.protocol
    current = await alice.register("alice", protocol_version=reg.protocol_version)
    assert current.protocol is None  # not behind: no text
    assert current.outcome == "reaffirmed"
    assert current.token == reg.token


async def test_direct_message_reaches_only_its_recipient(connect: ClientFactory) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    result = await alice.send("bob", "hello bob", thread="t1", meta={"k": 1})
    assert result.delivered_to == ["bob"]
    assert result.missed == []
    batch = await bob.receive(timeout=5)
    (msg,) = batch.messages
    assert (msg.sender, msg.to, msg.content, msg.thread, msg.meta) == (
        "alice",
        "bob",
        "hello bob",
        "t1",
        {"k": 1},
    )
    assert msg.seq == result.seq
    assert not msg.redelivered
    assert (await carol.peek()).pending == 0


async def test_broadcast_reaches_everyone_but_the_sender(connect: ClientFactory) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    result = await alice.send("all", "standup in 5")
    assert result.delivered_to == ["bob", "carol"]
    assert [m.content for m in (await bob.receive(timeout=5)).messages] == ["standup in 5"]
    assert [m.content for m in (await carol.receive(timeout=5)).messages] == ["standup in 5"]
    assert (await alice.peek()).pending == 0


async def test_channel_messages_reach_members_only(connect: ClientFactory) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    joined = await bob.join_channel("#release")
    assert joined.joined
    assert joined.members == ["bob"]
    result = await alice.send("#release", "tagging 1.0")
    assert result.delivered_to == ["bob"]  # alice joined by sending; carol is not a member
    (info,) = await carol.channels()
    assert info.members == ["alice", "bob"]
    assert [m.to for m in (await bob.receive(timeout=5)).messages] == ["#release"]
    assert (await carol.peek()).pending == 0
    await carol.join_channel("release")  # the '#' is optional
    await bob.send("#release", "ok")
    assert [m.content for m in (await carol.receive(timeout=5)).messages] == ["ok"]
    assert [m.content for m in (await alice.receive(timeout=5)).messages] == ["ok"]


async def test_channel_topic_is_for_members_and_leave_is_checked(
    connect: ClientFactory,
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.join_channel("#ops")
    channel = await alice.set_topic("#ops", "deploy friday")
    assert (channel.topic, channel.topic_by) == ("deploy friday", "alice")
    with pytest.raises(Forbidden):
        await bob.set_topic("#ops", "mine now")
    with pytest.raises(NotFound):
        await bob.set_topic("#nowhere", "x")
    with pytest.raises(NotFound):
        await bob.leave_channel("#ops")
    await alice.leave_channel("#ops")
    (ops,) = await bob.channels()
    assert ops.members == []
    assert ops.topic == "deploy friday"  # channels are durable


async def test_peek_previews_without_consuming(connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.send("bob", "short")
    await alice.send("bob", "x" * 500)
    peeked = await bob.peek()
    assert peeked.pending == 2
    assert peeked.last is not None
    assert (peeked.last.sender, peeked.last.truncated, peeked.last.chars) == ("alice", True, 500)
    assert len(peeked.last.preview) == 200
    assert len((await bob.receive(timeout=5)).messages) == 2


async def test_a_peek_can_wait_for_a_newer_message_and_still_consumes_nothing(
    connect: ClientFactory, live_hub: Hub
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.send("bob", "first")
    seen = await bob.peek()
    assert seen.last is not None
    first = seen.last.seq
    # Nothing newer than the first: the wait runs out and says what is there.
    assert (await bob.peek(after=first, wait=0.2)).last == seen.last
    waiting = asyncio.ensure_future(bob.peek(after=first, wait=30))
    await eventually(lambda: bool(live_hub.notifier.peeking_ids()), what="the peek parked")
    assert not waiting.done()  # parked: bob's inbox has nothing newer yet
    await alice.send("bob", "second")
    woken = await asyncio.wait_for(waiting, 30)
    assert woken.pending == 2
    assert woken.last is not None
    assert (woken.last.seq > first, woken.last.preview) == (True, "second")
    # A peek that waited still took nothing: a receive gets both.
    assert [m.content for m in (await bob.receive(timeout=5)).messages] == ["first", "second"]


async def test_a_peek_wait_is_bounded(url: str, connect: ClientFactory) -> None:
    bob = await connect("bob")
    assert bob.token is not None
    async with httpx2.AsyncClient(base_url=url) as http:
        auth = {"Authorization": f"Bearer {bob.token}"}
        for params in ({"after": 0, "wait": 3601}, {"after": -1, "wait": 1}, {"wait": "soon"}):
            answer = await http.get("/peek", params=params, headers=auth)
            assert answer.status_code == 422, params
            assert answer.json()["error"] == "invalid_request"


async def test_ping_and_status_are_answered_by_the_hub(connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob", skills=["sql"])
    await bob.set_status("migrating the schema")
    info = await alice.ping("bob")
    assert info.name == "bob"
    assert info.state == "online"
    assert info.status == "migrating the schema"
    assert [s.model_dump() for s in info.skills] == [{"id": "sql", "name": "sql"}]
    assert (await bob.peek()).pending == 0  # a ping never wakes the peer
    with pytest.raises(NotFound):
        await alice.ping("nobody")
    peers = {p.name: p for p in await alice.peers()}
    assert set(peers) == {"alice", "bob"}
    assert peers["bob"].status_age is not None


async def test_status_has_its_own_budget(connect: ClientFactory) -> None:
    alice = await connect("alice")
    for i in range(5):
        await alice.set_status(f"step {i}")
    with pytest.raises(Exception, match="status updates") as caught:
        await alice.set_status("one too many")
    assert getattr(caught.value, "code", None) == "rate_limited"
    await alice.send("all", "sending still works")  # a separate budget


async def test_leave_is_terminal_for_the_token(connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    token = alice.token
    await alice.leave()
    alice.token = token
    with pytest.raises(Unauthorized, match="has left"):
        await alice.send("bob", "still here?")
    with pytest.raises(NotFound):
        await bob.send("alice", "are you there?")
    again = await connect("alice")  # the name is free for a new identity
    assert again.token != token


async def test_a_live_listener_keeps_its_name(connect: ClientFactory) -> None:
    await connect("alice")
    with pytest.raises(NameInUse) as caught:
        await connect("alice")
    assert caught.value.status == 409


@pytest.mark.parametrize("name", ["all", "operator", "human", "hub", "system", "", "a b", "x" * 65])
async def test_reserved_and_malformed_names_are_422(connect: ClientFactory, name: str) -> None:
    client = await connect()
    with pytest.raises(InvalidRequest):
        await client.register(name)


async def test_unknown_or_missing_tokens_are_401(url: str, connect: ClientFactory) -> None:
    stranger = await connect()
    with pytest.raises(Unauthorized):
        await stranger.send("bob", "hi")
    stranger.token = "cau_forged"
    with pytest.raises(Unauthorized):
        await stranger.peek()
    with pytest.raises(Unauthorized):
        await stranger.register("alice", resume=True)


async def test_tokens_are_not_accepted_in_the_query_string(
    url: str, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    async with httpx2.AsyncClient(base_url=url) as http:
        response = await http.get("/peek", params={"token": alice.token})
        assert response.status_code == 401
        response = await http.get("/peek", headers={"Authorization": f"Basic {alice.token}"})
        assert response.status_code == 401


async def test_send_errors_have_their_status_and_code(url: str, connect: ClientFactory) -> None:
    alice = await connect("alice")
    await connect("bob")
    with pytest.raises(NotFound):
        await alice.send("ghost", "hello?")
    with pytest.raises(InvalidRequest):
        await alice.send("alice", "talking to myself")
    with pytest.raises(InvalidRequest):
        await alice.send("not a name", "x")
    with pytest.raises(InvalidRequest):
        await alice.send("bob", "")
    with pytest.raises(PayloadTooLarge):
        await alice.send("bob", "x" * 8193)
    await alice.send("bob", "x" * 8192)
    headers = {"Authorization": f"Bearer {alice.token}"}
    async with httpx2.AsyncClient(base_url=url, headers=headers) as http:
        cases = [
            (b"{not json", 400, "malformed_body"),
            (b'{"content": "no recipient"}', 422, "invalid_request"),
            (b'{"to": "bob", "content": "x", "sender": "bob"}', 422, "invalid_request"),
            (b'{"to": 5, "content": "x"}', 422, "invalid_request"),
            (b"[]", 422, "invalid_request"),
            (b'{"to": "bob", "content": "' + b"y" * 70_000 + b'"}', 413, "payload_too_large"),
        ]
        for body, status, code in cases:
            response = await http.post(
                "/send", content=body, headers={"Content-Type": "application/json"}
            )
            assert (response.status_code, response.json()["error"]) == (status, code), body[:40]
            assert response.json()["detail"]
        for bad in ("timeout=abc", "ack=x", "limit=0", "timeout=-1"):
            response = await http.get(f"/receive?{bad}")
            assert (response.status_code, response.json()["error"]) == (422, "invalid_request")


async def test_a_body_too_large_without_content_length_is_refused(
    url: str, connect: ClientFactory
) -> None:
    alice = await connect("alice")

    async def chunks():  # type: ignore[no-untyped-def]
        for _ in range(20):
            yield b"x" * 8192

    async with httpx2.AsyncClient(base_url=url) as http:
        response = await http.post(
            "/send", content=chunks(), headers={"Authorization": f"Bearer {alice.token}"}
        )
    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"


async def test_sending_too_fast_is_429_with_retry_after(tmp_path, clock) -> None:  # type: ignore[no-untyped-def]
    from caucus.testing import make_hub, serve

    async with (
        make_hub(tmp_path, send_rate_capacity=3, send_rate_refill=1) as h,
        serve(h) as base,
        HubClient(base) as alice,
        HubClient(base) as bob,
    ):
        await alice.register("alice")
        await bob.register("bob")
        for _ in range(3):
            await alice.send("bob", "x")
        async with httpx2.AsyncClient(base_url=base) as http:
            response = await http.post(
                "/send",
                json={"to": "bob", "content": "x"},
                headers={"Authorization": f"Bearer {alice.token}"},
            )
        assert response.status_code == 429
        body = response.json()
        assert body["error"] == "rate_limited"
        assert 0 < body["retry_after"] <= 1
        assert response.headers["Retry-After"] == "1"
        await bob.send("alice", "my budget is my own")


async def test_an_idempotent_retry_returns_the_first_result(connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    first = await alice.send("bob", "deploy", idempotency_key="deploy-42")
    again = await alice.send("bob", "deploy", idempotency_key="deploy-42")
    assert again.replayed
    assert (again.message_id, again.seq, again.delivered_to) == (
        first.message_id,
        first.seq,
        first.delivered_to,
    )
    assert len((await bob.receive(timeout=5)).messages) == 1


async def test_protocol_sections_and_unknown_section(connect: ClientFactory) -> None:
    client = await connect()
    core = await client.protocol()
    assert core.version >= 1
    assert "delivery" in core.sections
    delivery = await client.protocol("delivery")
    assert "at least once" in delivery.text
    with pytest.raises(NotFound) as caught:
        await client.protocol("nope")
    assert "delivery" in caught.value.extra["sections"]


async def test_unknown_routes_and_methods_answer_json(url: str) -> None:
    async with httpx2.AsyncClient(base_url=url) as http:
        missing = await http.get("/nope")
        assert (missing.status_code, missing.json()["error"]) == (404, "not_found")
        wrong = await http.get("/send")
        assert (wrong.status_code, wrong.json()["error"]) == (405, "method_not_allowed")


async def test_receive_returns_the_moment_a_message_arrives(connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    waiting = asyncio.create_task(bob.receive(timeout=20))

    async def bob_listens() -> bool:
        return (await alice.ping("bob")).listening

    await eventually(bob_listens, what="bob listening")
    await alice.send("bob", "wake up")
    batch = await asyncio.wait_for(waiting, timeout=10)
    assert [m.content for m in batch.messages] == ["wake up"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/register", b""),
        ("/status", b""),
        ("/channels/join", b""),
        ("/send", b""),
        ("/tasks", b""),
        ("/forms", b""),
        ("/register", b"{not json"),
        ("/status", b"{not json"),
        ("/channels/join", b"{not json"),
    ],
)
async def test_an_empty_or_malformed_body_is_400_malformed_body_on_every_route(
    url: str, connect: ClientFactory, path: str, body: bytes
) -> None:
    alice = await connect("alice")
    headers = {"Authorization": f"Bearer {alice.token}", "Content-Type": "application/json"}
    async with httpx2.AsyncClient(base_url=url, headers=headers) as http:
        response = await http.post(path, content=body)
    assert (response.status_code, response.json()["error"]) == (400, "malformed_body"), path
    assert "JSON" in response.json()["detail"]
