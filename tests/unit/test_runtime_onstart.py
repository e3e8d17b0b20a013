"""The On Start section: found at any heading level, ending at the next heading of the same or
a higher level, taken out of the system prompt; headings in code are text."""

from __future__ import annotations

from pathlib import Path

import pytest

from caucus.runtime.onstart import load_prompt, split_on_start


def test_a_top_level_on_start_section_is_taken_out_to_the_end() -> None:
    prompt = split_on_start("# Agent\nBe brief.\n\n# On Start\nGreet the room.\nThen wait.\n")
    assert prompt.instructions == "# Agent\nBe brief."
    assert prompt.on_start == "Greet the room.\nThen wait."


def test_the_section_ends_at_the_next_heading_of_its_level_or_higher() -> None:
    text = (
        "# Agent\n"
        "## Rules\nBe brief.\n"
        "## On start ##\nCheck the inbox.\n### Details\nOldest first.\n"
        "## Style\nPlain words.\n"
        "# Appendix\nNone.\n"
    )
    prompt = split_on_start(text)
    assert prompt.on_start == "Check the inbox.\n### Details\nOldest first."
    assert prompt.instructions == (
        "# Agent\n## Rules\nBe brief.\n## Style\nPlain words.\n# Appendix\nNone."
    )


def test_a_deeper_on_start_ends_at_a_shallower_heading() -> None:
    prompt = split_on_start("## Tools\nx\n#### On Start\nlook around\n### Next\ny\n")
    assert prompt.on_start == "look around"
    assert prompt.instructions == "## Tools\nx\n### Next\ny"


def test_headings_inside_code_fences_are_text() -> None:
    text = "# A\n```md\n# On Start\nnot this\n```\n# On Start\nthis\n```\n# Not a heading\n```\n"
    prompt = split_on_start(text)
    assert prompt.on_start == "this\n```\n# Not a heading\n```"
    assert prompt.instructions == "# A\n```md\n# On Start\nnot this\n```"


@pytest.mark.parametrize(
    "text", ["# Agent\nNo start here.\n", "# Agent\n# On Start\n\n# Later\nx\n", "#On Start\nx"]
)
def test_no_on_start_or_an_empty_one_sends_nothing(text: str) -> None:
    prompt = split_on_start(text)
    assert prompt.on_start is None
    assert "On Start" not in prompt.instructions or text.startswith("#On")  # `#On` is no heading


def test_the_shipped_prompt_has_an_on_start_and_a_file_replaces_it(tmp_path: Path) -> None:
    shipped = load_prompt(None)
    assert shipped.on_start
    assert "On Start" not in shipped.instructions
    mine = tmp_path / "p.md"
    mine.write_text("Only this.\n", "utf-8")
    assert load_prompt(mine).instructions == "Only this."
    mine.write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="UTF-8"):
        load_prompt(mine)
