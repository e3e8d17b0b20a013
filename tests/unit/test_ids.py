"""Message ids (caucus/ids.py): unique, and in a process sorted as they were made."""

from __future__ import annotations

from caucus.ids import MessageIds


def test_a_processs_ids_sort_in_the_order_they_were_made() -> None:
    """What keeps the unique index on ids appending at its edge: past the 15th id an unpadded
    hex counter ("…10" before "…f") would scatter them."""
    ids = MessageIds()
    made = [ids.next() for _ in range(5000)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)
    assert all(m.startswith("m_") for m in made)


def test_two_processes_draw_different_prefixes() -> None:
    a, b = MessageIds().next(), MessageIds().next()
    assert a != b
    assert a[:14] != b[:14]  # "m_" and the 48-bit prefix
