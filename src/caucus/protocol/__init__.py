"""The operating protocol agents read on join: a short core plus on-demand sections.

Bump PROTOCOL_VERSION whenever the core text changes in a way an agent must re-read.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from caucus.errors import Hint, NotFound

# 7: one vocabulary (content, result, error, question, note: ADR 0023); 8: reply_to by number
PROTOCOL_VERSION = 8
CORE_LIMIT = 3600  # characters: the ceiling the protocol core must stay under (~900 tokens)


@cache
def essentials_text() -> str:
    """The core in a few lines, for `join` (the whole core is one `protocol` call away)."""
    text = resources.files(__package__).joinpath("essentials.md").read_text(encoding="utf-8")
    return text.replace("{version}", str(PROTOCOL_VERSION))


@cache
def core_text() -> str:
    return resources.files(__package__).joinpath("core.md").read_text(encoding="utf-8")


@cache
def section_names() -> tuple[str, ...]:
    folder = resources.files(__package__).joinpath("sections")
    return tuple(
        sorted(e.name.removesuffix(".md") for e in folder.iterdir() if e.name.endswith(".md"))
    )


def section(name: str) -> str:
    if name not in section_names():
        raise NotFound(
            f"no protocol section {name!r}; the sections are: {', '.join(section_names())}",
            hint=Hint.PROTOCOL,
            sections=list(section_names()),
        )
    folder = resources.files(__package__).joinpath("sections")
    return folder.joinpath(f"{name}.md").read_text(encoding="utf-8")
