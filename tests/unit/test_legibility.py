"""What the operator reads of a tool call (issue 48 item 2): over a corpus of adversarial
strings (`tests/corpus/unicode.json`: bidi overrides and isolates, zero-width and other
default-ignorable code points, control characters, runs of blank lines, look-alike letters of
another script), the hub names exactly what hides in each, and its escaped text holds nothing
that does not show."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from caucus.domain.legibility import FindingKind, escaped, read

CORPUS: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[1] / "corpus" / "unicode.json").read_text()
)


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 40
    assert {k for case in CORPUS for k in case["kinds"]} == {k.value for k in FindingKind}


@pytest.mark.parametrize("case", CORPUS, ids=[c["name"] for c in CORPUS])
def test_each_string_reads_as_what_it_is(case: dict[str, Any]) -> None:
    reading = read("shell", {"command": case["value"]}, json.dumps(case["value"]))
    assert sorted({f.kind.value for f in reading.findings}) == case["kinds"]
    assert all(f.argument == "command" for f in reading.findings)
    shown = reading.arguments["command"]
    for char in shown:
        if char in "\n":
            continue
        category = unicodedata.category(char)
        assert category not in ("Cc", "Cf"), (case["name"], hex(ord(char)))
    assert reading.hidden == bool({"bidi", "invisible", "control"} & set(case["kinds"]))


def test_a_hidden_code_point_is_shown_by_its_number_and_a_line_break_kept() -> None:
    assert escaped("echo '\u202e'\nls\tx") == "echo '⟨U+202E⟩'↵\nls⇥x"
    (bidi,) = read("t", {"a": "x\u202ey"}, "").findings
    assert bidi.detail == "U+202E RIGHT-TO-LEFT OVERRIDE"
