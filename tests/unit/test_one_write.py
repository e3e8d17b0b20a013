"""`OneWrite` joins a response's head to the body written in the same turn of the loop, lets a
head with nothing behind it go at the end of the turn, and never reorders or drops bytes."""

from __future__ import annotations

import asyncio

from caucus.web.one_write import OneWrite


class Recorder:
    """The socket's side of a transport: every write as it was made."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def writelines(self, parts: tuple[bytes, ...]) -> None:
        self.writes.append(b"|".join(parts))  # one call, its parts still visible

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str) -> str:
        return f"info:{name}"


def through(recorder: Recorder) -> OneWrite:
    return OneWrite(recorder, asyncio.get_running_loop())  # type: ignore[arg-type]


async def a_turn() -> None:
    await asyncio.sleep(0)
    await asyncio.sleep(0)


async def test_a_head_and_the_body_behind_it_are_one_write() -> None:
    recorder = Recorder()
    transport = through(recorder)
    transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
    assert recorder.writes == []
    transport.write(b"body")
    assert recorder.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody"]
    transport.write(b"more")
    await a_turn()  # the turn's flush finds nothing held
    assert recorder.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody", b"more"]


async def test_a_head_with_nothing_behind_it_leaves_when_the_turn_ends() -> None:
    recorder = Recorder()
    transport = through(recorder)
    transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
    await a_turn()
    assert recorder.writes == [b"HTTP/1.1 200 OK\r\n\r\n"]
    transport.write(b"event")
    assert recorder.writes == [b"HTTP/1.1 200 OK\r\n\r\n", b"event"]


async def test_a_large_body_is_written_beside_its_head_not_copied_behind_it() -> None:
    recorder = Recorder()
    transport = through(recorder)
    body = b"x" * (256 * 1024)
    transport.write(b"head")
    transport.write(body)
    assert recorder.writes == [b"head|" + body]


async def test_closing_sends_what_is_held_first() -> None:
    recorder = Recorder()
    transport = through(recorder)
    transport.write(b"head")
    transport.close()
    assert recorder.writes == [b"head"]
    assert recorder.closed
    await a_turn()
    assert recorder.writes == [b"head"]  # not sent twice


async def test_a_closed_connection_is_not_written_to_at_the_end_of_the_turn() -> None:
    recorder = Recorder()
    transport = through(recorder)
    transport.write(b"head")
    recorder.closed = True  # the peer went away in the meantime
    await a_turn()
    assert recorder.writes == []


async def test_everything_else_is_the_transport_s() -> None:
    transport = through(Recorder())
    assert transport.get_extra_info("peername") == "info:peername"
