"""Operator forms: a bounded question an agent puts to the human, and the answer.

A form has up to `MAX_FIELDS` fields, each a choice (`radio`: one option, `checkbox`: any
number) or free text (`text`: a line, `textarea`: a paragraph). Choice fields list their
options and may allow an answer outside them (`allow_other`); text fields take no options.
Everything here is pure: the shape rules, answer validation, and how an answer reads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from caucus.domain.approvals import ToolCallSubject
from caucus.errors import FormClosed, InvalidRequest


class FieldType(StrEnum):
    RADIO = "radio"  # one of the options
    CHECKBOX = "checkbox"  # any number of the options
    TEXT = "text"  # a line
    TEXTAREA = "textarea"  # a paragraph


FIELD_TYPES = tuple(FieldType)
CHOICE_TYPES = (FieldType.RADIO, FieldType.CHECKBOX)
MAX_TITLE = 200
MAX_FIELDS = 20
MAX_LABEL = 200
MAX_OPTIONS = 20
MAX_OPTION = 100
MAX_OTHER = 500  # an answer outside the options, where allowed
MAX_TEXT = {"text": 1000, "textarea": 8000}
MAX_PENDING_PER_ASKER = 5
KEY_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")

Answer = str | list[str]


class FormState(StrEnum):
    PENDING = "pending"
    ANSWERED = "answered"
    CANCELED = "canceled"


@dataclass(frozen=True, slots=True)
class FormField:
    key: str
    label: str
    type: str
    options: tuple[str, ...] = ()
    required: bool = False
    allow_other: bool = False

    def record(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "type": self.type,
            "options": list(self.options),
            "required": self.required,
            "allow_other": self.allow_other,
        }


@dataclass(slots=True)
class Form:
    id: str
    asker: str
    audience: str  # "all" or "#channel"
    title: str
    fields: list[FormField]
    state: FormState
    created_at: float
    updated_at: float
    answer: dict[str, Answer] | None = None
    reason: str | None = None  # why the operator canceled it
    decision_hash: str | None = None  # the ledger record of the answer, once written
    call: ToolCallSubject | None = None  # the tool call an approval form is about
    asker_id: int | None = None  # the asker's identity (who may see it; not on the wire)


@dataclass(frozen=True, slots=True)
class Reach:
    """Who an answer's audience message reaches, as storage sees it when the answer commits."""

    asker_present: bool  # the asker can still receive messages
    asker_in_audience: bool  # ... and the audience message already reaches them


def _text(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidRequest(f"{what} must be a string", field=what)
    if not value.strip():
        raise InvalidRequest(f"{what} is empty", field=what)
    if len(value) > limit:
        raise InvalidRequest(f"{what} is at most {limit} characters", field=what, limit=limit)
    return value


def check_title(title: object) -> str:
    return _text(title, "title", MAX_TITLE)


def parse_fields(raw: object) -> list[FormField]:
    """The fields of a new form, checked: unique keys, options exactly where they belong."""
    if not isinstance(raw, list) or not raw:
        raise InvalidRequest("fields is a non-empty list of fields", field="fields")
    if len(raw) > MAX_FIELDS:
        raise InvalidRequest(
            f"a form has at most {MAX_FIELDS} fields", field="fields", limit=MAX_FIELDS
        )
    parsed: list[FormField] = []
    for index, item in enumerate(raw):
        at = f"fields[{index}]"
        if not isinstance(item, Mapping):
            raise InvalidRequest(f"{at} must be an object {{key, label, type, ...}}", field=at)
        unknown = set(item) - {"key", "label", "type", "options", "required", "allow_other"}
        if unknown:
            raise InvalidRequest(f"{at} has unknown keys: {', '.join(sorted(unknown))}", field=at)
        key = item.get("key")
        if not isinstance(key, str) or not KEY_RE.fullmatch(key):
            raise InvalidRequest(
                f"{at}.key must be 1-40 letters, digits, '_' or '-'", field=f"{at}.key"
            )
        if any(f.key == key for f in parsed):
            raise InvalidRequest(f"{at}.key {key!r} is used twice", field=f"{at}.key")
        label = _text(item.get("label", key), f"{at}.label", MAX_LABEL)
        kind = item.get("type")
        if kind not in FIELD_TYPES:
            raise InvalidRequest(
                f"{at}.type is one of {', '.join(FIELD_TYPES)}", field=f"{at}.type"
            )
        options = item.get("options")
        required, allow_other = item.get("required", False), item.get("allow_other", False)
        for flag, value in (("required", required), ("allow_other", allow_other)):
            if not isinstance(value, bool):
                raise InvalidRequest(f"{at}.{flag} is true or false", field=f"{at}.{flag}")
        if kind in CHOICE_TYPES:
            choices = _options(options, f"{at}.options", str(kind))
        else:
            if options:
                raise InvalidRequest(
                    f"{at} is a {kind} field: text fields take no options (use radio or "
                    "checkbox for a choice)",
                    field=f"{at}.options",
                )
            if allow_other:
                raise InvalidRequest(
                    f"{at}: allow_other is for choice fields", field=f"{at}.allow_other"
                )
            choices = ()
        parsed.append(FormField(key, label, str(kind), choices, required, allow_other))
    return parsed


def _options(options: object, at: str, kind: str) -> tuple[str, ...]:
    if not isinstance(options, list) or not options:
        raise InvalidRequest(
            f"{at}: a {kind} field needs options, a non-empty list of strings", field=at
        )
    if len(options) > MAX_OPTIONS:
        raise InvalidRequest(f"{at}: at most {MAX_OPTIONS} options", field=at, limit=MAX_OPTIONS)
    seen: list[str] = []
    for number, option in enumerate(options):
        text = _text(option, f"{at}[{number}]", MAX_OPTION)
        if text in seen:
            raise InvalidRequest(f"{at}: the option {text!r} is listed twice", field=at)
        seen.append(text)
    return tuple(seen)


def check_answer(fields: list[FormField], answers: object) -> dict[str, Answer]:
    """The operator's answer, checked against the form: every required field answered, choices
    among the options (or 'other' where allowed), text within its size."""
    if not isinstance(answers, Mapping):
        raise InvalidRequest("answers is an object of field key to answer", field="answers")
    known = {f.key for f in fields}
    unknown = [key for key in answers if key not in known]
    if unknown:
        raise InvalidRequest(
            f"this form has no field {unknown[0]!r}; its fields are {', '.join(sorted(known))}",
            field=f"answers.{unknown[0]}",
        )
    checked: dict[str, Answer] = {}
    for f in fields:
        value = answers.get(f.key)
        at = f"answers.{f.key}"
        if value is None or value == [] or (isinstance(value, str) and not value.strip()):
            if f.required:
                raise InvalidRequest(f"{f.label!r} ({f.key}) is required: answer it", field=at)
            continue
        if f.type == "radio":
            checked[f.key] = _choice(f, value, at)
        elif f.type == "checkbox":
            if not isinstance(value, list):
                raise InvalidRequest(f"{at} is a list of the chosen options", field=at)
            chosen = [_choice(f, v, f"{at}[{n}]") for n, v in enumerate(value)]
            if len(set(chosen)) != len(chosen):
                raise InvalidRequest(f"{at} names an option twice", field=at)
            checked[f.key] = chosen
        else:
            checked[f.key] = _text(value, at, MAX_TEXT[f.type])
    return checked


def _choice(f: FormField, value: object, at: str) -> str:
    if not isinstance(value, str):
        raise InvalidRequest(f"{at} must be one of the options, as a string", field=at)
    if value in f.options:
        return value
    if not f.allow_other:
        raise InvalidRequest(
            f"{value!r} is not an option of {f.key}; the options are "
            + ", ".join(repr(o) for o in f.options),
            field=at,
        )
    return _text(value, at, MAX_OTHER)


def answer_lines(form: Form) -> list[str]:
    """`label: value` per answered field, in the form's order."""
    answer = form.answer or {}
    lines = []
    for f in form.fields:
        if f.key not in answer:
            continue
        value = answer[f.key]
        shown = ", ".join(value) if isinstance(value, list) else value
        lines.append(f"{f.label}: {shown}")
    return lines


def settled(form: Form, to: FormState) -> FormState:
    """Where settling takes a form: only a pending one is answered or canceled, once."""
    if to is FormState.PENDING:
        raise InvalidRequest("a form is settled by answering or canceling it", field="state")
    if form.state is not FormState.PENDING:
        why = f" ({form.reason})" if form.state is FormState.CANCELED and form.reason else ""
        raise FormClosed(
            f"form {form.id} is already {form.state.value}{why}: it takes no other answer",
            form_id=form.id,
            state=form.state.value,
        )
    return to
