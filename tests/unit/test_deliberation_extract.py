"""The answer is the last complete JSON object a model wrote; an unfinished revision after it
is an error, earlier malformed drafts are skipped."""

from __future__ import annotations

import pytest

from caucus.deliberation.extract import Malformed, last_object


def test_prose_and_code_fences_around_the_object_are_ignored() -> None:
    text = 'Here is my view.\n```json\n{"stance": "approve", "confidence": 0.7}\n```\nThanks!'
    assert last_object(text) == {"stance": "approve", "confidence": 0.7}


def test_braces_and_quotes_inside_strings_do_not_end_the_object() -> None:
    text = r'{"summary": "use {x} and \"}\" here", "n": {"deep": [1, {"a": "}"}]}}'
    assert last_object(text)["summary"] == 'use {x} and "}" here'


def test_the_last_complete_object_wins_over_earlier_drafts() -> None:
    text = 'Draft: {"stance": "reject"}\nOn reflection: {"stance": "approve"}'
    assert last_object(text) == {"stance": "approve"}


def test_a_malformed_earlier_object_is_skipped_and_scanning_resumes_after_it() -> None:
    text = '{"stance": approve, oops} then {"stance": "defer", "confidence": 0.5}'
    assert last_object(text) == {"stance": "defer", "confidence": 0.5}


def test_a_truncated_revision_after_a_complete_object_is_an_error() -> None:
    text = '{"stance": "approve"}\nActually, revising: {"stance": "rej'
    with pytest.raises(Malformed, match="unfinished revision"):
        last_object(text)


def test_a_malformed_revision_after_a_complete_object_is_an_error() -> None:
    text = '{"stance": "approve"} and then {"stance": nope}'
    with pytest.raises(Malformed, match="unfinished revision"):
        last_object(text)


def test_braces_in_prose_are_not_taken_for_objects() -> None:
    assert last_object('{"stance": "approve"} — hope that helps {smile}') == {"stance": "approve"}


def test_no_object_at_all_is_an_error() -> None:
    with pytest.raises(Malformed, match="no JSON object"):
        last_object("I approve.")


def test_nan_is_not_a_number_here() -> None:
    with pytest.raises(Malformed):
        last_object('{"confidence": NaN}')
