"""A tool call put to the operator: what the operator reads is what the approval is bound to.

An agent that wants to run a gated tool asks the operator with a form that carries the call:
the tool, every argument, the files its arguments name (each with the hash of what it holds
now) and what the tool's annotations say. The call's canonical text — JSON with sorted keys,
two-space indents, nothing escaped that need not be — is at once what the console shows, what
the approve option's SHA-256 digest covers, and what the ledger records. The hub computes the
text and the digest itself and refuses a form whose approve option names another digest, so
an agent cannot show one call and have another approved.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from caucus.errors import InvalidRequest

MAX_CALL_TEXT = 48_000  # characters of canonical text; a bigger call cannot be shown whole
MAX_TOOL_NAME = 200
APPROVE_PREFIX = "approve sha256:"


@dataclass(frozen=True, slots=True)
class ToolCallSubject:
    """The call an approval is about."""

    tool: str
    arguments: Mapping[str, Any]
    files: Mapping[str, str] = field(default_factory=dict)  # path -> what it held
    annotations: Mapping[str, Any] = field(default_factory=dict)  # the tool's hints, as given

    def record(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "files": dict(self.files),
            "annotations": dict(self.annotations),
        }

    def canonical(self) -> str:
        return json.dumps(self.record(), sort_keys=True, indent=2, ensure_ascii=False)

    def digest(self) -> str:
        # surrogatepass: a model's lone surrogate still hashes (the hub then refuses the form)
        return hashlib.sha256(self.canonical().encode("utf-8", "surrogatepass")).hexdigest()


def approve_option(digest: str) -> str:
    return APPROVE_PREFIX + digest


def parse_call(raw: object) -> ToolCallSubject:
    """A call from the wire, checked: its parts are of the right kinds and it can be shown
    whole."""
    if not isinstance(raw, Mapping):
        raise InvalidRequest(
            "call is an object {tool, arguments, files, annotations}", field="call"
        )
    unknown = set(raw) - {"tool", "arguments", "files", "annotations"}
    if unknown:
        raise InvalidRequest(f"call has unknown keys: {', '.join(sorted(unknown))}", field="call")
    tool = raw.get("tool")
    if not isinstance(tool, str) or not tool.strip() or len(tool) > MAX_TOOL_NAME:
        raise InvalidRequest(
            f"call.tool is the tool's name, 1-{MAX_TOOL_NAME} characters", field="call.tool"
        )
    arguments = raw.get("arguments", {})
    if not isinstance(arguments, Mapping):
        raise InvalidRequest("call.arguments is an object", field="call.arguments")
    files = raw.get("files", {})
    if not isinstance(files, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in files.items()
    ):
        raise InvalidRequest("call.files maps each path to what it held", field="call.files")
    annotations = raw.get("annotations", {})
    if not isinstance(annotations, Mapping):
        raise InvalidRequest("call.annotations is an object", field="call.annotations")
    subject = ToolCallSubject(tool, dict(arguments), dict(files), dict(annotations))
    size = len(subject.canonical())
    if size > MAX_CALL_TEXT:
        raise InvalidRequest(
            f"the call is {size:,} characters as shown; at most {MAX_CALL_TEXT:,} can be put "
            "to the operator whole",
            field="call",
            limit=MAX_CALL_TEXT,
        )
    return subject


def check_bound(subject: ToolCallSubject, options: list[str]) -> None:
    """A form carrying a call must offer to approve exactly that call, and no other."""
    wanted = approve_option(subject.digest())
    approvals = [o for o in options if o.startswith(APPROVE_PREFIX)]
    if approvals != [wanted]:
        raise InvalidRequest(
            f"a form carrying a call offers exactly one approve option, {wanted!r}: the "
            "digest of the call's canonical text, which is what the operator reads",
            field="fields",
        )
