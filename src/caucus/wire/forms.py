"""The operator's forms on the wire, and the decisions and ledger they feed."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from caucus.domain.approvals import ToolCallSubject
from caucus.domain.decisions import Decision, LedgerStatus
from caucus.domain.forms import FieldType, Form, FormField, FormState
from caucus.domain.legibility import FindingKind, read
from caucus.wire.fields import Wire, closed


class FormFieldInfo(Wire):
    key: str
    label: str
    type: str = closed(FieldType)
    options: list[str]
    required: bool
    allow_other: bool

    @classmethod
    def of(cls, f: FormField) -> FormFieldInfo:
        return cls.model_construct(
            key=f.key,
            label=f.label,
            type=f.type,
            options=list(f.options),
            required=f.required,
            allow_other=f.allow_other,
        )


class CallFinding(Wire):
    """What hides in an argument (`argument`: its key, '' for the tool's name): hidden
    characters (bidi, invisible, control), a run of blank lines, or look-alike letters
    (`detail`: the code points, or the token and what its letters mimic)."""

    kind: FindingKind
    argument: str
    detail: str


class ToolCallInfo(Wire):
    """The tool call an approval form is about, whole: its canonical text is what the approve
    option's digest covers and what the ledger records. `shown` and `canonical_shown` are the
    same with nothing hidden (`domain.legibility`): what every client displays."""

    tool: str
    arguments: dict[str, Any]
    files: dict[str, str] = Field(description="each path the arguments name, and what it held")
    annotations: dict[str, Any] = Field(description="the tool's hints, as its server gave them")
    canonical: str = Field(description="the call as the operator approves it")
    sha256: str = Field(description="the digest of the canonical text")
    # Each argument, and the canonical text, as every client shows them: hidden characters
    # as visible escapes (⟨U+202E⟩, ↵); `hidden` when the call holds any (ADR 0034).
    shown: dict[str, str] = Field(default_factory=dict)
    canonical_shown: str = ""
    hidden: bool = False
    findings: list[CallFinding] = Field(default_factory=list)

    @classmethod
    def of(cls, call: ToolCallSubject) -> ToolCallInfo:
        canonical = call.canonical()
        reading = read(call.tool, call.arguments, canonical)
        return cls.model_construct(
            tool=call.tool,
            arguments=dict(call.arguments),
            files=dict(call.files),
            annotations=dict(call.annotations),
            canonical=canonical,
            sha256=call.digest(),
            shown=reading.arguments,
            canonical_shown=reading.canonical,
            hidden=reading.hidden,
            findings=[
                CallFinding.model_construct(kind=f.kind, argument=f.argument, detail=f.detail)
                for f in reading.findings
            ],
        )


class FormInfo(Wire):
    form_id: str
    asker: str
    to: str = Field(description="who gets the answer: 'all' or '#channel'")
    title: str
    fields: list[FormFieldInfo]
    state: str = closed(FormState)
    created_at: float
    updated_at: float
    answer: dict[str, str | list[str]] | None
    reason: str | None = Field(description="why the operator canceled it")
    decision_hash: str | None = Field(description="its answer's ledger record, once written")
    call: ToolCallInfo | None = Field(None, description="the tool call it asks to approve")

    @classmethod
    def of(cls, form: Form) -> FormInfo:
        return cls.model_construct(
            form_id=form.id,
            asker=form.asker,
            to=form.audience,
            title=form.title,
            fields=[FormFieldInfo.of(f) for f in form.fields],
            state=form.state.value,
            created_at=form.created_at,
            updated_at=form.updated_at,
            answer=form.answer,
            reason=form.reason,
            decision_hash=form.decision_hash,
            call=ToolCallInfo.of(form.call) if form.call is not None else None,
        )


class FormList(Wire):
    forms: list[FormInfo]

    @classmethod
    def of(cls, forms: list[Form]) -> FormList:
        return cls.model_construct(forms=[FormInfo.of(f) for f in forms])


class DecisionRecord(Wire):
    """A ledger record in the caucus decision record format; other fields it carries (the
    format allows them, the hash covers them) come along as they are."""

    model_config = ConfigDict(extra="allow")

    schema_version: str
    timestamp: str
    subject: str
    decision: str
    confidence: float
    positions: list[dict[str, Any]]
    dissent: list[dict[str, Any]]
    evidence: list[dict[str, Any]]
    prev_hash: str
    hash: str

    @classmethod
    def of(cls, decision: Decision) -> DecisionRecord:
        return cls.model_construct(**decision.record)


class DecisionList(Wire):
    decisions: list[DecisionRecord] = Field(description="newest first")

    @classmethod
    def of(cls, decisions: list[Decision]) -> DecisionList:
        return cls.model_construct(decisions=[DecisionRecord.of(d) for d in decisions])


class LedgerBreakInfo(Wire):
    index: int
    reason: str


class LedgerRecoveryInfo(Wire):
    from_count: int = Field(description="records the checkpoint named before")
    to_count: int = Field(description="records it names now")
    at: float = Field(description="when, epoch seconds")


class LedgerStatusInfo(Wire):
    path: str
    records: int = Field(description="records verified (before the break, if there is one)")
    intact: bool
    anchored: bool = Field(description="a head checkpoint matches (tail truncation is caught)")
    head_hash: str
    broken: LedgerBreakInfo | None = None
    unrecorded_error: str | None = Field(
        description="why the last answers could not be recorded, if they could not"
    )
    recovered: LedgerRecoveryInfo | None = Field(
        None,
        description="the head checkpoint lagged records this hub had noted before writing "
        "them (a crash between the two) and was moved over them without a person",
    )

    @classmethod
    def of(cls, s: LedgerStatus) -> LedgerStatusInfo:
        broken = None
        if s.broken is not None:
            broken = LedgerBreakInfo.model_construct(index=s.broken.index, reason=s.broken.reason)
        return cls.model_construct(
            path=s.path,
            records=s.records,
            intact=s.intact,
            anchored=s.anchored,
            head_hash=s.head_hash,
            broken=broken,
            unrecorded_error=s.unrecorded_error,
            recovered=(
                LedgerRecoveryInfo.model_construct(
                    from_count=s.recovered.from_count,
                    to_count=s.recovered.to_count,
                    at=s.recovered.at,
                )
                if s.recovered is not None
                else None
            ),
        )
