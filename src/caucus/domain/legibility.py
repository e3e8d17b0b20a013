"""What the operator reads of a tool call, so that nothing invisible or misleading reaches the
approval card raw (issue 48, ADR 0034).

Every character that changes how text reads without being seen — bidirectional controls,
zero-width and other default-ignorable code points, control characters — is shown as a
visible escape (`⟨U+202E⟩`), a tab as `⇥` and a line break as `↵` at the end of its line; a
run of blank lines is named. A token (a word of a command, a URL's host, a path segment, a
branch name) that mixes scripts with letters that look like others (`github.com` written with
U+0456, a Cyrillic i) is named with what each letter looks like, from Unicode's confusables
data (`confusable_homoglyphs`). The hub computes all of it once, here, and sends it with the form:
every client shows the same escapes and the same warnings.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

BIDI = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
# Default-ignorable code points that are not format characters (Cf), which are all hidden.
IGNORABLE = frozenset(
    [
        *(0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0),
        *range(0x180B, 0x1810),  # Mongolian variation selectors
        *range(0xFE00, 0xFE10),  # variation selectors
        *range(0xE0100, 0xE01F0),  # variation selectors supplement
    ]
)
BLANK_RUN = 3  # this many blank lines in a row are named: they can push a command out of view
_TOKEN = re.compile(r"[^\s/\\:@?#&=,;'\"`()\[\]{}<>|]+")


class FindingKind(StrEnum):
    BIDI = "bidi"  # reorders what follows: text reads other than it runs
    INVISIBLE = "invisible"  # zero-width and other default-ignorable code points
    CONTROL = "control"  # control characters other than a tab or a line break
    BLANK_LINES = "blank_lines"  # a run of blank lines
    LOOKALIKE = "lookalike"  # letters of another script that look like these


HIDDEN = frozenset({FindingKind.BIDI, FindingKind.INVISIBLE, FindingKind.CONTROL})


@dataclass(frozen=True, slots=True)
class Finding:
    kind: FindingKind
    argument: str  # the argument's key ("" for the tool's name)
    detail: str


@dataclass(frozen=True, slots=True)
class Reading:
    """A call as the operator reads it: each argument's text with its escapes, the canonical
    text likewise, and what was found."""

    arguments: dict[str, str]
    canonical: str
    findings: list[Finding]

    @property
    def hidden(self) -> bool:
        """Whether the call holds characters that do not show (the card's badge)."""
        return any(f.kind in HIDDEN for f in self.findings)


def _kind(code: int, char: str) -> FindingKind | None:
    if code in BIDI:
        return FindingKind.BIDI
    category = unicodedata.category(char)
    if category == "Cf" or code in IGNORABLE:
        return FindingKind.INVISIBLE
    if category == "Cc" and char not in "\n\t":
        return FindingKind.CONTROL
    return None


def _name(code: int) -> str:
    return f"U+{code:04X} {unicodedata.name(chr(code), 'unnamed')}"


def escaped(text: str) -> str:
    """`text` with nothing hidden: each bidi, invisible or control character as `⟨U+XXXX⟩`, a
    tab as `⇥`, a line break as `↵` before it (the break kept, so lines still read as lines)."""
    out: list[str] = []
    for char in text:
        code = ord(char)
        if char == "\n":
            out.append("↵\n")
        elif char == "\t":
            out.append("⇥")
        elif _kind(code, char) is not None:
            out.append(f"⟨U+{code:04X}⟩")
        else:
            out.append(char)
    return "".join(out)


def findings(text: str, argument: str) -> list[Finding]:
    """What hides in `text`: each kind of hidden character once (with the code points), a run
    of blank lines, and each token mixing scripts with look-alike letters."""
    found: dict[FindingKind, list[str]] = {}
    for char in text:
        kind = _kind(ord(char), char)
        if kind is not None:
            names = found.setdefault(kind, [])
            if _name(ord(char)) not in names:
                names.append(_name(ord(char)))
    out = [Finding(kind, argument, ", ".join(names[:6])) for kind, names in found.items()]
    blank = _blank_lines(text)
    if blank >= BLANK_RUN:
        out.append(Finding(FindingKind.BLANK_LINES, argument, f"{blank} blank lines in a row"))
    out += lookalikes(text, argument)
    return out


def _blank_lines(text: str) -> int:
    """The longest run of blank lines between two lines that hold something."""
    longest = run = 0
    for line in text.split("\n")[1:-1]:
        run = run + 1 if not line.strip() else 0
        longest = max(longest, run)
    return longest


def lookalikes(text: str, argument: str) -> list[Finding]:
    """Tokens that mix scripts with letters Unicode lists as confusable with others."""
    from confusable_homoglyphs import confusables  # a 900 KB table: loaded when first needed

    out: list[Finding] = []
    for token in dict.fromkeys(_TOKEN.findall(text)):
        if token.isascii() or not confusables.is_mixed_script(token):
            continue
        found = confusables.is_confusable(token, greedy=True, preferred_aliases=["latin"])
        if not found:
            continue
        parts = []
        for entry in found:
            char = str(entry["character"])
            like = ", ".join(str(h["c"]) for h in entry["homoglyphs"][:3])
            parts.append(f"{char} ({_name(ord(char[0]))}) looks like {like}")
        out.append(Finding(FindingKind.LOOKALIKE, argument, f"{token}: " + "; ".join(parts)))
    return out


def shown(value: Any) -> str:
    """An argument's value as text: itself if a string, else JSON with sorted keys."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)


def read(tool: str, arguments: Mapping[str, Any], canonical: str) -> Reading:
    """A call as the operator reads it (see the module docstring)."""
    texts = {key: shown(arguments[key]) for key in sorted(arguments)}
    found = findings(tool, "")
    for key, text in texts.items():
        found += findings(key, key) + findings(text, key)
    return Reading({k: escaped(v) for k, v in texts.items()}, escaped(canonical), found)
