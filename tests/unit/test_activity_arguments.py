"""What the activity view keeps of a tool call's arguments (issue 35): the value of every key
that looks like a credential is replaced, at any depth, long strings and the whole are cut,
and nothing else changes."""

from __future__ import annotations

import json

from caucus.domain.activity import ARGUMENT_CHARS, REDACTED, VALUE_CHARS, redacted, shown_arguments


def test_secret_looking_keys_are_redacted_at_any_depth_and_others_kept() -> None:
    given = {
        "to": "bob",
        "API_KEY": "sk-1",
        "headers": [{"Authorization": "Bearer x", "accept": "json"}],
        "db": {"password": "hunter2", "host": "localhost"},
        "handle": "h-123",
        "count": 3,
    }
    assert redacted(given) == {
        "to": "bob",
        "API_KEY": REDACTED,
        "headers": [{"Authorization": REDACTED, "accept": "json"}],
        "db": {"password": REDACTED, "host": "localhost"},
        "handle": REDACTED,
        "count": 3,
    }


def test_long_strings_and_the_whole_are_cut_and_empty_arguments_show_nothing() -> None:
    long = redacted({"content": "x" * 1000})["content"]
    assert long == "x" * VALUE_CHARS + "…"
    many = shown_arguments({f"k{n}": "v" * 100 for n in range(20)})
    assert many is not None
    assert len(many) == ARGUMENT_CHARS + 1
    assert many.endswith("…")
    assert shown_arguments({}) is None
    assert shown_arguments(None) is None
    assert json.loads(shown_arguments({"to": "bob"}) or "") == {"to": "bob"}
