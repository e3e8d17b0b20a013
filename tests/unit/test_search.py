"""What a search query means, the snippet a hit shows, and a thread's transcript for a model
(issue 34): words and phrases parsed so no user text reaches a store's query syntax, lone
common words dropped as PostgreSQL drops them, the densest run of matches shown and marked,
and the opening and newest messages kept within a model's budget."""

from __future__ import annotations

import pytest

from caucus.domain.messages import Message
from caucus.domain.search import (
    MAX_QUERY,
    MAX_WORDS,
    HitKind,
    SearchQuery,
    hit_kind,
    message_kinds,
    snippet,
)
from caucus.domain.threads import digest, transcript
from caucus.errors import InvalidRequest


def test_a_query_is_words_and_quoted_phrases_with_punctuation_splitting_words() -> None:
    q = SearchQuery.parse('Parser "cache  eviction" src/caucus/web.py parser "unclosed quote')
    assert q.phrases == (
        ("parser",),
        ("cache", "eviction"),
        ("src", "caucus", "web", "py"),
        ("unclosed", "quote"),
    )
    assert q.fts5() == '"parser" "cache eviction" "src caucus web py" "unclosed quote"'
    assert q.tsquery() == (
        "('parser') & ('cache' <-> 'eviction') & ('src' <-> 'caucus' <-> 'web' <-> 'py')"
        " & ('unclosed' <-> 'quote')"
    )


def test_nothing_a_user_types_reaches_a_store_s_query_syntax() -> None:
    q = SearchQuery.parse("""a' OR 1=1 -- NEAR(x y) col:value ^start * ' \\ & | ! <->""")
    for phrase in q.phrases:
        for word in phrase:
            assert word.isalnum(), word
    assert "'" not in q.fts5().replace('"', "")


def test_lone_common_words_are_dropped_and_a_query_of_only_them_is_refused() -> None:
    assert SearchQuery.parse("the build of it").phrases == (("build",),)
    assert SearchQuery.parse('"to be or not"').phrases == (("to", "be", "or", "not"),)
    with pytest.raises(InvalidRequest, match="too common"):
        SearchQuery.parse("the and of")
    with pytest.raises(InvalidRequest, match="no words"):
        SearchQuery.parse('?! "" --')
    with pytest.raises(InvalidRequest, match=f"at most {MAX_QUERY}"):
        SearchQuery.parse("x" * (MAX_QUERY + 1))
    with pytest.raises(InvalidRequest, match=f"at most {MAX_WORDS} words"):
        SearchQuery.parse(" ".join(f"w{i}" for i in range(MAX_WORDS + 1)))


def test_each_message_kind_is_one_hit_kind() -> None:
    assert hit_kind("announce") is HitKind.ANNOUNCEMENT
    assert {hit_kind(k) for k in ("task", "result", "failure", "input_request")} == {HitKind.TASK}
    assert hit_kind("chat") is HitKind.MESSAGE
    assert message_kinds(HitKind.DECISION) == []
    assert message_kinds(None) is None
    assert "operator" in (message_kinds(HitKind.MESSAGE) or [])


def test_a_short_text_is_shown_whole_with_every_match_marked() -> None:
    words = SearchQuery.parse("reserve files").words
    assert snippet("Reserving the files\nnow; file reserved.", words) == (
        "**Reserving** the **files** now; **file** **reserved**."
    )


def test_a_long_text_shows_its_densest_run_of_matches_cut_at_spaces() -> None:
    filler = " ".join(f"filler{i}" for i in range(60))
    text = f"cache once. {filler} the cache eviction drops cache entries early. {filler}"
    shown = snippet(text, SearchQuery.parse("cache eviction").words, width=80)
    assert shown.startswith("…")
    assert shown.endswith("…")
    assert "the **cache** **eviction** drops **cache** entries early." in shown
    assert len(shown.replace("**", "")) <= 80 + 2
    # Cut at spaces: every word shown is a whole word of the text.
    assert set(shown.replace("**", "").strip("…").split()) <= set(text.split())


def _message(seq: int, sender: str, content: str, **meta: str) -> Message:
    return Message(
        seq=seq,
        id=f"m{seq}",
        ts=1_000_000.0 + seq * 60,
        sender=sender,
        to="bob",
        kind="chat",
        content=content,
        meta=meta or None,
        thread=None if seq == 1 else "m1",
    )


def test_a_transcript_keeps_the_opening_and_the_newest_within_its_budget() -> None:
    found = [_message(i, "alice" if i % 2 else "bob", f"message number {i}") for i in range(1, 40)]
    text = transcript(found, budget=200)
    lines = text.splitlines()
    assert lines[0] == "[1] alice: message number 1"
    assert lines[1] == "[…]"
    assert lines[-1] == "[39] alice: message number 39"
    assert len(text) <= 200 + len("\n[…]")


def test_a_digest_names_the_tasks_of_a_thread_in_their_last_state() -> None:
    found = [
        _message(1, "alice", "Please build the wheel."),
        _message(2, "alice", "build the wheel", task_id="t1", state="pending", subject="wheel"),
        _message(3, "bob", "built", task_id="t1", state="completed", subject="wheel"),
    ]
    d = digest("m1", found)
    assert [(t.task_id, t.state, t.subject) for t in d.tasks] == [("t1", "completed", "wheel")]
    assert d.text().endswith("Tasks: t1 completed (wheel).")
