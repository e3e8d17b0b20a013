"""The rules of file reservations (issue 34): how a pattern is written down, which patterns
meet, and which files an exclusive reservation covers (git's wildmatch, anchored at the
repository's root)."""

from __future__ import annotations

import pytest

from caucus.domain.reservations import (
    Reservation,
    blocking,
    conflicts,
    covers,
    normalized,
    overlaps,
)
from caucus.errors import InvalidRequest


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("src/app.py", "src/app.py"),
        ("./src//app.py", "src/app.py"),
        (" docs/ ", "docs/"),
        ("src/./**/*.py", "src/**/*.py"),
    ],
)
def test_a_pattern_is_stored_relative_and_tidy(given: str, stored: str) -> None:
    assert normalized(given) == stored


@pytest.mark.parametrize(
    "bad", ["", "/etc/passwd", "C:/x", "../up", "a/../../b", "a\\b", "!src/", ".", "x" * 513]
)
def test_a_pattern_outside_the_repository_or_unclear_is_refused(bad: str) -> None:
    with pytest.raises(InvalidRequest):
        normalized(bad)


@pytest.mark.parametrize(
    ("pattern", "path", "covered"),
    [
        ("src/app.py", "src/app.py", True),
        ("docs/", "docs/index.md", True),
        ("docs", "docs/deep/x.md", True),
        ("src/**/*.py", "src/a/b/c.py", True),
        ("src/**/*.py", "src/c.py", True),
        ("src/*.py", "src/a/c.py", False),
        ("*.toml", "pyproject.toml", True),
        ("*.toml", "sub/pyproject.toml", False),  # anchored at the root
        ("README.md", "docs/README.md", False),
        ("src", "srcx/a.py", False),
    ],
)
def test_a_pattern_covers_files_as_git_s_wildmatch_does(
    pattern: str, path: str, covered: bool
) -> None:
    assert covers(pattern, path) is covered


@pytest.mark.parametrize(
    ("a", "b", "meet"),
    [
        ("src/app.py", "src/app.py", True),
        ("src/", "src/app.py", True),
        ("src/app.py", "src/**/*.py", True),
        ("src/*.py", "src/app.py", True),
        ("docs/", "src/", False),
        ("src/a.py", "src/b.py", False),
    ],
)
def test_patterns_meet_when_one_names_what_the_other_covers(a: str, b: str, meet: bool) -> None:
    assert overlaps(a, b) is meet
    assert overlaps(b, a) is meet


def _held(holder: str, pattern: str, exclusive: bool) -> Reservation:
    return Reservation(f"r_{holder}_{pattern}", holder, pattern, exclusive, None, 0.0, 60.0)


def test_shared_meets_only_exclusive_and_never_one_s_own() -> None:
    held = [_held("alice", "src/", True), _held("bob", "docs/", False)]
    assert [c.holder for c in conflicts(["src/a.py"], False, held, "carol")] == ["alice"]
    assert conflicts(["docs/a.md"], False, held, "carol") == []
    assert [c.holder for c in conflicts(["docs/a.md"], True, held, "carol")] == ["bob"]
    assert conflicts(["src/a.py"], True, held, "alice") == []


def test_only_another_holder_s_exclusive_reservation_blocks_a_file() -> None:
    held = [_held("alice", "src/**/*.py", True), _held("bob", "docs/", False)]
    found = blocking(["src/x/y.py", "docs/a.md", "setup.py"], held, "carol")
    assert [(path, r.holder) for path, r in found] == [("src/x/y.py", "alice")]
    assert blocking(["src/x/y.py"], held, "alice") == []
