"""Request bodies of the HTTP API (they document it in /openapi.json, too). What the hub
answers is beside them in `caucus.wire`: one wire model per noun."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic.config import JsonDict

from caucus.domain.dependencies import DEFAULT_PRIORITY, MAX_BLOCKED_BY, OnFailure
from caucus.domain.floors import FloorAction
from caucus.domain.forms import FieldType
from caucus.domain.reservations import ReservationPolicy
from caucus.wire.fields import MAX_INT, closed
from caucus.wire.launcher import Backend

Seq = Annotated[int, Field(ge=0, le=MAX_INT)]
# What the hub enforces, documented in the schema only: the domain checks it and says why in
# its own words (and a length limit from the settings would not be fixed here anyway).
NAME: JsonDict = {"pattern": "^[A-Za-z0-9._-]{1,64}$"}
TARGET: JsonDict = {"pattern": "^#?[A-Za-z0-9._-]{1,64}$"}
LINE: JsonDict = {"maxLength": 280}
REASON: JsonDict = {"maxLength": 500}
SUBJECT: JsonDict = {"maxLength": 120}


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _content(description: str) -> Any:
    """Words a party writes for others: `content`, on every surface (ADR 0023). `payload`, the
    name some routes used before, is still read, for one release (deprecated)."""
    return Field(
        description=f"{description} (`payload` is read too: deprecated)",
        validation_alias=AliasChoices("content", "payload"),
    )


def body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of a route that reads its own body (the hot routes, which
    parse it in `api/hotpath.py` / `api/hot_tasks.py`, shared with the fast lane)."""
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": model.model_json_schema()}},
        }
    }


class SkillIn(_In):
    id: str | None = None
    name: str | None = None
    description: str | None = None
    tags: list[str] | None = None

    def data(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class RegisterRequest(_In):
    name: str = Field(
        description="1-64 letters, digits, '.', '_' or '-', not only dots; not reserved",
        json_schema_extra=NAME,
    )
    token: str | None = Field(
        None, description="your existing token, to resume that identity (or send it as Bearer)"
    )
    skills: list[str | SkillIn] | None = Field(
        None, description="kept when omitted", json_schema_extra={"maxItems": 32}
    )
    description: str | None = Field(
        None, description="kept when omitted", json_schema_extra={"maxLength": 1000}
    )
    protocol_version: int | None = Field(
        None,
        ge=0,
        le=MAX_INT,
        description="the protocol version you know; the text is returned if it is behind",
    )


class SendRequest(_In):
    to: str = Field(description="a peer name, 'all', or '#channel'", json_schema_extra=TARGET)
    content: str
    thread: str | None = None
    reply_to: str | None = Field(
        None, description="the message this answers: its number (#22 or 22) or its id"
    )
    meta: dict[str, Any] | None = None
    idempotency_key: str | None = Field(
        None, description="repeat within 24 h to get the first result back"
    )


class AckRequest(_In):
    seqs: list[Seq] | None = Field(None, max_length=10_000)
    through: Seq | None = Field(
        None, description="acknowledge the batch holding this seq, up to and including it"
    )


class StatusRequest(_In):
    status: str = Field(description="one line, at most 280 characters", json_schema_extra=LINE)


class ChannelRequest(_In):
    channel: str = Field(description="'#name' (the '#' may be omitted)", json_schema_extra=TARGET)


class ChannelJoinRequest(ChannelRequest):
    private: bool | None = Field(
        None,
        description="create it private (only you, the operator and whom it invites read it); "
        "refused for a public channel that exists",
    )


class ChannelPrivacyRequest(_In):
    private: bool


class ChannelPeerRequest(_In):
    peer: str = Field(description="the agent's name", json_schema_extra=TARGET)


class TopicRequest(_In):
    channel: str = Field(json_schema_extra=TARGET)
    topic: str = Field(description="one line, at most 280 characters", json_schema_extra=LINE)


class OperatorSayRequest(_In):
    to: str = Field(description="a peer name, 'all', or '#channel'", json_schema_extra=TARGET)
    content: str
    thread: str | None = None
    meta: dict[str, Any] | None = None


class AnnounceRequest(_In):
    content: str
    subject: str | None = None


class ReasonRequest(_In):
    reason: str | None = Field(
        None, description="told to the peers, at most 500 characters", json_schema_extra=REASON
    )


class PurgeRequest(_In):
    before: str | float | None = Field(
        None,
        description="epoch seconds or ISO 8601; finished items older than this go "
        "(default: the retention age)",
    )
    dry_run: bool = Field(False, description="only say what would go")


class RateRequest(_In):
    capacity: float = Field(ge=0, le=1e9, description="sends an agent may make at once")
    refill: float = Field(
        ge=0, le=1e9, description="sends per second added back to each agent's budget"
    )


class TaskRequest(_In):
    to: str = Field(description="the worker: one peer, by name", json_schema_extra=NAME)
    content: str = _content("what to do")
    subject: str | None = Field(
        None, description="a short title, at most 120 characters", json_schema_extra=SUBJECT
    )
    thread: str | None = Field(None, description="defaults to the task id")
    blocked_by: list[str] | None = Field(
        None,
        max_length=MAX_BLOCKED_BY,
        description="task ids it waits on: it reaches its worker once they are all done",
    )
    priority: int = Field(DEFAULT_PRIORITY, ge=0, le=4, description="0 most urgent … 4 least")
    on_failure: str = closed(
        OnFailure,
        "what a task it waits on failing does: cancel this one, or proceed anyway",
        default=OnFailure.CANCEL.value,
    )


class DependRequest(_In):
    blocked_by: list[str] = Field(
        min_length=1, max_length=MAX_BLOCKED_BY, description="more task ids it waits on"
    )


class TaskResultRequest(_In):
    result: str = Field(description="the worker: the result; the sender: the answer it was asked")


class TaskErrorRequest(_In):
    error: str


class TaskQuestionRequest(_In):
    question: str


class AgentAnnounceRequest(_In):
    content: str = _content("the news, at most 4 KB")
    subject: str | None = Field(
        None, description="at most 120 characters", json_schema_extra=SUBJECT
    )


class OfferRequest(_In):
    content: str = _content("the work, at most 4 KB (it is announced)")
    subject: str | None = Field(
        None, description="at most 120 characters", json_schema_extra=SUBJECT
    )
    required_skills: list[str | SkillIn] | None = None
    ttl_seconds: float | None = Field(
        None, ge=60, le=72 * 3600, description="60 s to 72 h; default 24 h"
    )
    blocked_by: list[str] | None = Field(
        None,
        max_length=MAX_BLOCKED_BY,
        description="task ids it waits on: announced and open to claims once they are done",
    )
    priority: int = Field(DEFAULT_PRIORITY, ge=0, le=4, description="0 most urgent … 4 least")
    on_failure: str = closed(
        OnFailure,
        "what a task it waits on failing does: withdraw this offer, or proceed anyway",
        default=OnFailure.CANCEL.value,
    )


class ClaimRequest(_In):
    note: str | None = Field(
        None, description="why you, in at most 500 characters", json_schema_extra=REASON
    )


class ResolveRequest(_In):
    select: str | None = Field(None, description="the claimant who gets the work as a task")
    withdraw: bool = Field(False, description="take the offer back instead")


class FloorRequest(_In):
    action: str = closed(FloorAction)
    scope: str = Field(description="'all' or '#channel'", json_schema_extra=TARGET)
    reason: str | None = Field(None, description="why you want the floor")


class FormFieldIn(_In):
    key: str = Field(
        description="1-40 letters, digits, '_' or '-'; unique in the form",
        json_schema_extra={"pattern": "^[A-Za-z0-9_-]{1,40}$"},
    )
    label: str | None = Field(
        None,
        description="what the operator reads; defaults to the key",
        json_schema_extra={"maxLength": 200},
    )
    type: str = closed(FieldType)
    options: list[str] | None = Field(
        None,
        description="radio and checkbox only: 1-20 choices of at most 100 characters",
        json_schema_extra={"maxItems": 20, "items": {"type": "string", "maxLength": 100}},
    )
    required: bool = False
    allow_other: bool = Field(False, description="choice fields: accept an answer not listed")


class AskRequest(_In):
    title: str = Field(
        description="the question, at most 200 characters", json_schema_extra={"maxLength": 200}
    )
    fields: list[FormFieldIn] = Field(
        description="1-20 fields", json_schema_extra={"minItems": 1, "maxItems": 20}
    )
    to: str = Field(
        "all",
        description="who gets the answer: 'all' or a #channel you are in",
        json_schema_extra=TARGET,
    )
    call: ToolCallIn | None = Field(
        None,
        description="a tool call this form asks to approve: the operator reads it whole, and "
        "the form must offer `approve sha256:<digest of its canonical text>`",
    )


class ToolCallIn(_In):
    tool: str = Field(description="the tool's name")
    arguments: dict[str, Any] = Field(default_factory=dict, description="every argument")
    files: dict[str, str] = Field(
        default_factory=dict, description="each path the arguments name, and what it held"
    )
    annotations: dict[str, Any] = Field(
        default_factory=dict, description="what the tool's annotations say, as its server gave them"
    )


class AnswerRequest(_In):
    answers: dict[str, str | list[str] | None] = Field(
        description="field key to answer: a string (radio, text, textarea) or a list of "
        "strings (checkbox)"
    )


class RedeemRequest(_In):
    ticket: str = Field(description="a ticket from POST /watch/tickets", max_length=200)


class ConveneRequest(_In):
    subject: str = Field(
        description="what is to be decided, 1-500 characters", json_schema_extra={"maxLength": 500}
    )
    panel: list[str] | str = Field(
        description="the panelists' names (1-8), or a #channel whose other members sit"
    )
    chair: str = Field(
        "operator", description="who decides: 'operator' (a form), 'model', or a peer's name"
    )
    evidence: list[dict[str, Any]] = Field(
        default_factory=list,
        description="objects with a `source` and a `ref` (filled in when missing), other keys kept",
    )
    rounds: int = Field(2, ge=1, le=4, description="at most this many rounds (1-4)")
    deadline: float = Field(
        300.0, ge=5, le=3600, description="seconds each panelist has to answer a round"
    )


class PositionRequest(_In):
    stance: str = Field(description="approve, reject or defer")
    summary: str = Field(
        description="your argument (as the chair: the decision), at most 1000 characters",
        json_schema_extra={"maxLength": 1000},
    )
    confidence: float = Field(ge=0, le=1, description="from 0 to 1")
    evidence: list[str] = Field(
        default_factory=list, description="the refs of the evidence you rely on"
    )


class LaunchRequest(_In):
    """A native agent to start on this machine (`caucus agent`, its arguments a list)."""

    name: str = Field(description="the agent's name in the room", json_schema_extra=NAME)
    backend: Backend = Field("openai", description="where its answers come from")
    model: str | None = Field(
        None, max_length=200, description="openai: the model's name on the server (required)"
    )
    base_url: str | None = Field(
        None, max_length=500, description="openai: the OpenAI-compatible server's URL"
    )
    api_key_env: str | None = Field(
        None,
        pattern="^[A-Z_][A-Z0-9_]{0,63}$",
        description="openai: the variable holding the server's key, passed on from the hub's "
        "environment (no other variable is, beyond a short allowlist)",
    )
    prompt: str | None = Field(
        None, max_length=20_000, description="the system prompt (default: the room's)"
    )
    tools: list[str] = Field(
        default_factory=list,
        max_length=8,
        description="MCP servers to start over stdio for tools, one command line each (split "
        "into arguments, never run by a shell)",
    )
    approve: list[str] = Field(
        default_factory=list,
        max_length=32,
        description="tools that wait for the operator's approval of each call even if their "
        "server marks them read-only (every tool not marked read-only waits anyway)",
    )
    allow: list[str] = Field(
        default_factory=list,
        max_length=32,
        description="tools that run unasked, whatever their server says of them",
    )
    skills: list[str] = Field(default_factory=list, max_length=32)
    description: str | None = Field(None, max_length=280)
    workdir: str | None = Field(
        None, max_length=1000, description="an existing directory to run in (default: the hub's)"
    )


class ToolCallReport(_In):
    """An MCP tool call a bridge ran, for the operator's activity view."""

    tool: str = Field(pattern="^[a-z][a-z0-9_]{0,63}$", description="the tool's name")
    ok: bool
    error: str | None = Field(
        None, pattern="^[a-z][a-z0-9_]{0,63}$", description="the error's code when it failed"
    )
    detail: str | None = Field(None, max_length=2000, description="what the error said")
    ms: float = Field(ge=0, le=86_400_000, description="how long it took, in milliseconds")
    arguments: dict[str, Any] | None = Field(
        None,
        description="what it was called with; keys that look secret (token, key, password, "
        "handle…) are redacted and the whole is cut to 400 characters before it is kept",
    )


PATHS: JsonDict = {"maxItems": 50, "items": {"maxLength": 512}}


class ReserveRequest(_In):
    paths: list[str] = Field(
        description="paths or globs relative to the repository's root (git's wildmatch: "
        "'src/app.py', 'docs/', 'src/**/*.py'), at most 50",
        json_schema_extra=PATHS,
    )
    exclusive: bool = Field(True, description="false: shared with other shared holders")
    ttl: float | None = Field(None, ge=60, le=86400, description="60 s to 24 h; default 1 h")
    reason: str | None = Field(None, description="what you are doing", json_schema_extra=LINE)


class ReleaseRequest(_In):
    ids: list[str] = Field(default_factory=list, description="reservation ids")
    paths: list[str] = Field(
        default_factory=list, description="patterns as reserved", json_schema_extra=PATHS
    )
    all: bool = Field(False, description="every reservation you hold")


class RenewRequest(_In):
    ids: list[str] = Field(default_factory=list, description="reservation ids; none: all")
    ttl: float | None = Field(None, ge=60, le=86400, description="60 s to 24 h; default 1 h")


class BlockedRequest(_In):
    paths: list[str] = Field(
        description="files relative to the repository's root (what a commit touches)",
        max_length=10_000,
    )
    holder: str | None = Field(
        None, description="whose reservations do not block (the committing agent)"
    )


class ReservationPolicyRequest(_In):
    policy: str = closed(ReservationPolicy, "advisory: grant and report; enforce: refuse")


class SpawnRequest(_In):
    """A teammate to start: a native agent on one of the operator's model profiles."""

    prompt: str = Field(
        min_length=1,
        max_length=8000,
        description="its system prompt: who it is, what it is for, whom it reports to",
    )
    profile: str = Field(
        max_length=64, description="a model profile on the operator's list (GET /teammates)"
    )
    tools: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list,
        max_length=8,
        description="tools from the operator's list, by name (beyond the room's own)",
    )
    name: str | None = Field(
        None,
        description="its name in the room (default: yours and four hex digits)",
        json_schema_extra=NAME,
    )


class SpawnGrantRequest(_In):
    teammates: int = Field(
        1, ge=1, le=16, description="how many teammates the agent may have running at once"
    )
