"""The IRC bridge's pieces: protocol lines parsed, own messages filtered even when echoed, a
mention is the nick as a word, and answers wrapped at 400 bytes on word boundaries."""

from __future__ import annotations

from caucus.runtime.connectors.irc import IrcConnector, parse, wrapped


def test_lines_parse_with_and_without_prefix_tags_and_trailing() -> None:
    line = parse("@time=x :alice!~a@host PRIVMSG #room :hello there: friend\r\n")
    assert line is not None
    assert (line.nick, line.command, line.params) == (
        "alice",
        "PRIVMSG",
        ["#room", "hello there: friend"],
    )
    ping = parse("PING :irc.test")
    assert ping is not None
    assert (ping.command, ping.params) == ("PING", ["irc.test"])
    assert parse("") is None
    assert parse(":only.a.prefix") is None


async def test_own_messages_are_filtered_and_mentions_are_whole_words() -> None:
    irc = IrcConnector("127.0.0.1", 6667, "bot", ["room"], mention_only=True)
    assert irc.channels == ["#room"]
    for raw in (
        ":bot!~bot@h PRIVMSG #room :bot echoed back",  # its own, echoed
        ":BOT!~bot@h PRIVMSG #room :bot in other case",
        ":alice!~a@h PRIVMSG #room :the robot said so",  # not a mention
        ":alice!~a@h PRIVMSG #room :bots everywhere",
    ):
        line = parse(raw)
        assert line is not None
        irc._heard(line)
    assert irc._queue.empty()
    for raw in (":alice!~a@h PRIVMSG #room :hey bot, look", ":alice!~a@h PRIVMSG bot :Bot?"):
        line = parse(raw)
        assert line is not None
        irc._heard(line)
    first, second = irc._queue.get_nowait(), irc._queue.get_nowait()
    assert "hey bot, look" in first.text  # type: ignore[union-attr]
    assert "from alice to #room" in first.text  # type: ignore[union-attr]
    assert "from alice to you" in second.text  # type: ignore[union-attr]


def test_answers_wrap_at_400_bytes_on_words_and_drop_blank_lines() -> None:
    text = "first\n\n   \n" + " ".join(["ééé"] * 200) + "\nlast"
    lines = wrapped(text)
    assert lines[0] == "first"
    assert lines[-1] == "last"
    middle = lines[1:-1]
    assert all(len(x.encode()) <= 400 for x in middle)
    assert " ".join(middle) == " ".join(["ééé"] * 200)
    giant = "x" * 1000
    assert [len(x) for x in wrapped(giant)] == [400, 400, 200]
    assert wrapped("\n\n") == []
