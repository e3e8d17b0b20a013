"""Evidence normalised to the record's shape (a source and a ref, other keys kept), and
evidence that cannot be recorded refused with where it is."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from caucus.deliberation.evidence import EvidenceError, Source, load_file, normalise, run_source


def test_missing_source_and_ref_are_filled_and_other_keys_kept() -> None:
    items = normalise(
        [
            {"source": "bench", "ref": "relay.txt", "ratio": 0.33},
            {"url": "https://example.org/pg", "note": "n"},
            {"path": "docs/adr/0014.md"},
            {"text": "nothing to cite"},
            {"source": "", "id": 7},
        ],
        source="evidence.json",
        where="test",
    )
    assert items == [
        {"source": "bench", "ref": "relay.txt", "ratio": 0.33},
        {
            "url": "https://example.org/pg",
            "note": "n",
            "source": "evidence.json",
            "ref": "https://example.org/pg",
        },
        {"path": "docs/adr/0014.md", "source": "evidence.json", "ref": "docs/adr/0014.md"},
        {"text": "nothing to cite", "source": "evidence.json", "ref": "evidence.json#4"},
        {"source": "evidence.json", "id": 7, "ref": "7"},
    ]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ({"a": 1}, "must hold a JSON list of objects, not an object"),
        (["text"], "item 1 is a string, not an object"),
        ([{"n": 2**60}], "item 1 holds a number the ledger cannot record"),
    ],
)
def test_evidence_the_ledger_cannot_hold_is_refused_with_where_it_is(
    value: object, why: str
) -> None:
    with pytest.raises(EvidenceError, match=why):
        normalise(value, source="s", where="the evidence file e.json")


def test_a_file_that_is_not_json_or_holds_nan_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "e.json"
    bad.write_text("[{]")
    with pytest.raises(EvidenceError, match="is not JSON"):
        load_file(bad)
    bad.write_text(json.dumps([{"x": 1}]).replace("1", "NaN"))
    with pytest.raises(EvidenceError, match="is not JSON"):
        load_file(bad)
    with pytest.raises(EvidenceError, match="cannot read"):
        load_file(tmp_path / "missing.json")


async def test_a_source_past_its_timeout_aborts_and_is_named() -> None:
    slow = Source("slow", [sys.executable, "-c", "import time; time.sleep(30)"], 0.5)
    with pytest.raises(EvidenceError, match=r"'slow' did not finish within 0\.5 s"):
        await run_source(slow)
    silent = Source("prose", [sys.executable, "-c", "print('no json here')"])
    with pytest.raises(EvidenceError, match="'prose' did not print JSON"):
        await run_source(silent)
