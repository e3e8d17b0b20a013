"""Request bodies of the HTTP API (they document it in /openapi.json, too). What the hub
answers is in `caucus.web`: one wire model per noun."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from caucus.domain.floors import FloorAction
from caucus.domain.forms import FieldType
from caucus.web.fields import closed


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SkillIn(_In):
    id: str | None = None
    name: str | None = None
    description: str | None = None
    tags: list[str] | None = None

    def data(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class RegisterRequest(_In):
    name: str = Field(description="1-64 letters, digits, '.', '_' or '-'")
    token: str | None = Field(
        None, description="your existing token, to resume that identity (or send it as Bearer)"
    )
    skills: list[str | SkillIn] | None = Field(None, description="kept when omitted")
    description: str | None = Field(None, description="kept when omitted")
    protocol_version: int | None = Field(
        None, description="the protocol version you know; the text is returned if it is behind"
    )


class SendRequest(_In):
    to: str = Field(description="a peer name, 'all', or '#channel'")
    content: str
    thread: str | None = None
    reply_to: str | None = Field(None, description="id of the message this answers")
    meta: dict[str, Any] | None = None
    idempotency_key: str | None = Field(
        None, description="repeat within 24 h to get the first result back"
    )


class AckRequest(_In):
    seqs: list[int] | None = None
    through: int | None = Field(
        None, description="acknowledge the batch holding this seq, up to and including it"
    )


class StatusRequest(_In):
    status: str = Field(description="one line, at most 280 characters")


class ChannelRequest(_In):
    channel: str = Field(description="'#name' (the '#' may be omitted)")


class TopicRequest(_In):
    channel: str
    topic: str = Field(description="one line, at most 280 characters")


class OperatorSayRequest(_In):
    to: str = Field(description="a peer name, 'all', or '#channel'")
    content: str
    thread: str | None = None
    meta: dict[str, Any] | None = None


class AnnounceRequest(_In):
    content: str
    subject: str | None = None


class ReasonRequest(_In):
    reason: str | None = Field(None, description="told to the peers, at most 500 characters")


class RateRequest(_In):
    capacity: float = Field(description="sends an agent may make at once")
    refill: float = Field(description="sends per second added back to each agent's budget")


class TaskRequest(_In):
    to: str = Field(description="the worker: one peer, by name")
    payload: str = Field(description="what to do")
    subject: str | None = Field(None, description="a short title, at most 120 characters")
    thread: str | None = Field(None, description="defaults to the task id")


class TaskResultRequest(_In):
    result: str = Field(description="the worker: the result; the sender: the answer it was asked")


class TaskErrorRequest(_In):
    error: str


class TaskQuestionRequest(_In):
    question: str


class AgentAnnounceRequest(_In):
    payload: str = Field(description="the news, at most 4 KB")
    subject: str | None = Field(None, description="at most 120 characters")


class OfferRequest(_In):
    payload: str = Field(description="the work, at most 4 KB (it is announced)")
    subject: str | None = Field(None, description="at most 120 characters")
    required_skills: list[str | SkillIn] | None = None
    ttl_seconds: float | None = Field(None, description="60 s to 72 h; default 24 h")


class ClaimRequest(_In):
    note: str | None = Field(None, description="why you, in at most 500 characters")


class ResolveRequest(_In):
    select: str | None = Field(None, description="the claimant who gets the work as a task")
    withdraw: bool = Field(False, description="take the offer back instead")


class FloorRequest(_In):
    action: str = closed(FloorAction)
    scope: str = Field(description="'all' or '#channel'")
    reason: str | None = Field(None, description="why you want the floor")


class FormFieldIn(_In):
    key: str = Field(description="1-40 letters, digits, '_' or '-'; unique in the form")
    label: str | None = Field(None, description="what the operator reads; defaults to the key")
    type: str = closed(FieldType)
    options: list[str] | None = Field(
        None, description="radio and checkbox only: 1-20 choices of at most 100 characters"
    )
    required: bool = False
    allow_other: bool = Field(False, description="choice fields: accept an answer not listed")


class AskRequest(_In):
    title: str = Field(description="the question, at most 200 characters")
    fields: list[FormFieldIn] = Field(description="1-20 fields")
    to: str = Field("all", description="who gets the answer: 'all' or a #channel you are in")


class AnswerRequest(_In):
    answers: dict[str, str | list[str] | None] = Field(
        description="field key to answer: a string (radio, text, textarea) or a list of "
        "strings (checkbox)"
    )
