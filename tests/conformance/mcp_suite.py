"""The MCP conformance suite (`@modelcontextprotocol/conformance`, from npm) run against a door,
its results read back, judged against what Caucus offers, and written as docs/conformance.md's
MCP section.

Every server scenario of the suite (`--suite all`) runs. One Caucus offers must pass. One that
needs the suite's own fixture (tools named `test_*`, prompts, `test://` resources) or a
capability Caucus does not declare is listed in `NOT_OFFERED` with the reason and the answer
it must get instead: an unknown tool or prompt -32602, an unknown resource -32002, a method
not served -32601. So a scenario that starts passing by accident, a fixture call that gets the
wrong error, and a scenario a newer suite adds all fail the tier until someone decides.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tests.nodebin import BIN, node_bin
from tests.waiting import within

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
BEGIN, END = "<!-- mcp-conformance:begin -->", "<!-- mcp-conformance:end -->"

UNKNOWN_TOOL = "MCP error -32602: Unknown tool"
UNKNOWN_PROMPT = "MCP error -32602: Unknown prompt"
UNKNOWN_RESOURCE = "MCP error -32002: Resource not found"
NOT_SERVED = "MCP error -32601: Method not found"
NO_ELICITATION = "Server did not request elicitation"

_FIXTURE_TOOL = "a fixture tool of the suite's own"
_FIXTURE_PROMPT = "a fixture prompt of the suite's own"
_FIXTURE_RESOURCE = "a fixture resource of the suite's own"
_MEDIA = "; Caucus's tools answer text and structured content, never image or audio"

# scenario -> (why it cannot pass against Caucus, what its failure must say)
NOT_OFFERED: dict[str, tuple[str, str]] = {
    "logging-set-level": (
        "no `logging` capability: the hub's log is the operator's, and 2026-07-28 deprecates "
        "`logging/setLevel` (SEP-2577)",
        NOT_SERVED,
    ),
    "completion-complete": (
        "no `completions` capability: Caucus's prompts take no arguments to complete",
        NOT_SERVED,
    ),
    "tools-call-simple-text": (_FIXTURE_TOOL, UNKNOWN_TOOL),
    "tools-call-image": (_FIXTURE_TOOL + _MEDIA, UNKNOWN_TOOL),
    "tools-call-audio": (_FIXTURE_TOOL + _MEDIA, UNKNOWN_TOOL),
    "tools-call-embedded-resource": (_FIXTURE_TOOL, UNKNOWN_TOOL),
    "tools-call-mixed-content": (_FIXTURE_TOOL + _MEDIA, UNKNOWN_TOOL),
    "tools-call-with-logging": (
        _FIXTURE_TOOL + ", after `logging/setLevel` (no `logging` capability)",
        NOT_SERVED,
    ),
    "tools-call-error": (
        _FIXTURE_TOOL + "; a Caucus tool that fails answers `isError` with its code and next "
        "step (tests/interaction/test_readable_results.py)",
        UNKNOWN_TOOL,
    ),
    "tools-call-with-progress": (_FIXTURE_TOOL, UNKNOWN_TOOL),
    "tools-call-sampling": (
        _FIXTURE_TOOL + "; Caucus never asks the host's model (sampling is deprecated in "
        "2026-07-28)",
        UNKNOWN_TOOL,
    ),
    "tools-call-elicitation": (
        _FIXTURE_TOOL + "; Caucus asks its operator, in the console, not the host's user",
        UNKNOWN_TOOL,
    ),
    "elicitation-sep1034-defaults": (_FIXTURE_TOOL + " (elicitation)", UNKNOWN_TOOL),
    "elicitation-sep1330-enums": (_FIXTURE_TOOL + " (elicitation)", UNKNOWN_TOOL),
    "json-schema-2020-12": (_FIXTURE_TOOL, "Tool 'json_schema_2020_12_tool' not found"),
    "resources-read-text": (_FIXTURE_RESOURCE, UNKNOWN_RESOURCE),
    "resources-read-binary": (_FIXTURE_RESOURCE, UNKNOWN_RESOURCE),
    "resources-templates-read": (
        _FIXTURE_RESOURCE + "; `resources/templates/list` answers with the inbox's template "
        "(tests/interaction/test_mcp_protocol_errors.py)",
        UNKNOWN_RESOURCE,
    ),
    "resources-subscribe": (
        _FIXTURE_RESOURCE + "; subscribing to an inbox is tested in "
        "tests/interaction/test_mcp_inbox.py and test_bridge_inbox.py",
        UNKNOWN_RESOURCE,
    ),
    "resources-unsubscribe": (_FIXTURE_RESOURCE, UNKNOWN_RESOURCE),
    "prompts-get-simple": (_FIXTURE_PROMPT, UNKNOWN_PROMPT),
    "prompts-get-with-args": (_FIXTURE_PROMPT, UNKNOWN_PROMPT),
    "prompts-get-embedded-resource": (_FIXTURE_PROMPT, UNKNOWN_PROMPT),
    "prompts-get-with-image": (_FIXTURE_PROMPT, UNKNOWN_PROMPT),
}
# Scenarios of the HTTP transport itself: against the bridge they would check the relay.
TRANSPORT_ONLY = {
    "dns-rebinding-protection": "Host and Origin checks of the HTTP transport",
    "server-sse-multiple-streams": "several SSE streams of one HTTP session",
    "server-sse-polling": "SSE resumability of the HTTP transport",
}
# Passes with warnings only (the scenario has no failing check): what it recommends.
ADVISORY = {
    "server-sse-polling": "warns that POST streams carry no event ids or `retry` field: "
    "Caucus's streams are not resumable (a client calls again; nothing acknowledged is lost)",
}

_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


@dataclass(frozen=True)
class Outcome:
    scenario: str
    passed: int
    failed: int
    warnings: int
    errors: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.failed == 0


async def run_suite(url: str, out: Path) -> str:
    """Run every server scenario against `url`; the suite's printed output."""
    conformance = node_bin("conformance")
    env = {**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    proc = await asyncio.create_subprocess_exec(
        str(conformance),
        *("server", "--url", url, "--suite", "all", "-o", str(out)),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=env,
    )
    printed, _ = await within(proc.communicate(), 600, "the conformance suite to end")
    return printed.decode()


def outcomes(out: Path, skip: set[str] | frozenset[str] = frozenset()) -> dict[str, Outcome]:
    found: dict[str, Outcome] = {}
    for folder in sorted(out.iterdir()):
        match = _DIR.match(folder.name)
        if match is None or match["scenario"] in skip:
            continue
        checks = json.loads((folder / "checks.json").read_text())
        statuses = [c["status"] for c in checks]
        errors = tuple(c.get("errorMessage") or "" for c in checks if c["status"] == "FAILURE")
        found[match["scenario"]] = Outcome(
            match["scenario"],
            passed=statuses.count("SUCCESS"),
            failed=statuses.count("FAILURE"),
            warnings=statuses.count("WARNING"),
            errors=errors,
        )
    return found


def misjudged(results: dict[str, Outcome]) -> list[str]:
    """What does not hold: a scenario Caucus offers that fails, one it does not offer that
    passes or fails for another reason than the one recorded, and one nobody classified."""
    wrong = []
    for name, outcome in sorted(results.items()):
        expected = NOT_OFFERED.get(name)
        if expected is None and not outcome.ok:
            wrong.append(f"{name}: fails: {'; '.join(outcome.errors)}")
        elif expected is not None and outcome.ok:
            wrong.append(f"{name}: passes, but NOT_OFFERED says {expected[0]!r}")
        elif expected is not None and not all(expected[1] in e for e in outcome.errors):
            wrong.append(f"{name}: expected {expected[1]!r}, got {'; '.join(outcome.errors)}")
    return wrong


def render(version: str, doors: dict[str, dict[str, Outcome]]) -> str:
    """docs/conformance.md's MCP section: one row per scenario, one column per door."""
    names = sorted({n for results in doors.values() for n in results} | set(TRANSPORT_ONLY))
    head = "| scenario | " + " | ".join(f"`{d}`" for d in doors) + " | why |"
    lines = [
        f"Suite: `@modelcontextprotocol/conformance` {version}, `server --suite all`, "
        "every scenario against each door (`tests/conformance/`).",
        "",
        head,
        "|" + "---|" * (len(doors) + 2),
    ]
    for name in names:
        cells = [_cell(results.get(name)) for results in doors.values()]
        why = NOT_OFFERED[name][0] if name in NOT_OFFERED else ADVISORY.get(name, "")
        if name in TRANSPORT_ONLY:
            why = (why + "; " if why else "") + f"bridge: not run ({TRANSPORT_ONLY[name]})"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {why} |")
    totals = [
        sum(o.ok for o in results.values() if o.scenario not in NOT_OFFERED)
        for results in doors.values()
    ]
    offered = [sum(n not in NOT_OFFERED for n in results) for results in doors.values()]
    lines += [
        "",
        "Offered and passing: "
        + ", ".join(f"`{d}` {t} of {o}" for d, t, o in zip(doors, totals, offered, strict=True))
        + f"; not offered: {len(NOT_OFFERED)} (each fails with the error recorded for it).",
    ]
    return "\n".join(lines)


def _cell(outcome: Outcome | None) -> str:
    if outcome is None:
        return "—"
    if outcome.scenario in NOT_OFFERED:
        return "not offered"
    if outcome.ok:
        return "pass" + (f" ({outcome.warnings} warnings)" if outcome.warnings else "")
    return "FAIL"


def with_section(doc: str, section: str) -> str:
    before, rest = doc.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    return f"{before}{BEGIN}\n{section}\n{END}{after}"


def suite_version() -> str:
    lock = json.loads((Path(__file__).resolve().parents[1] / "node" / "package.json").read_text())
    return str(lock["dependencies"]["@modelcontextprotocol/conformance"])
