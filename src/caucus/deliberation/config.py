"""`config.yaml`: how `caucus deliberate`, `briefing` and `anchor` are set up in a directory.

The keys are the reference tooling's (log, max_rounds, backend, panel, agenda,
evidence_sources, intents, notify, anchor_command) plus `stances`; an unknown key is an error
that names it, so a typo never silently falls back to a default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from caucus.deliberation.evidence import Source
from caucus.deliberation.panel import (
    DEFAULT_PANEL,
    DEFAULT_STANCES,
    MAX_ROUNDS,
    Analyst,
    check_panel,
)

CONFIG_NAME = "config.yaml"


class ConfigError(Exception):
    """A config that cannot be used; the message names the file and the key."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BackendConfig(_Strict):
    type: Literal["openai", "claude-cli"] = "openai"
    model: str | None = None
    base_url: str = "http://127.0.0.1:8080/v1"
    api_key_env: str | None = None
    command: str = "claude"  # claude-cli: the Claude Code executable
    mcp_config: Path | None = None  # the MCP evidence layer: servers the analysts may call
    allowed_tools: list[str] = Field(default_factory=list)
    timeout_seconds: float = Field(600.0, gt=0)
    # openai: ask the server for JSON mode (response_format json_object) when no tools are
    # offered; small local models then always answer parseable JSON.
    json_mode: bool = False
    # openai, with json_mode: also send each answer's JSON schema (`schema` inside
    # response_format, as llama.cpp's server takes it), which constrains the answer to a usable
    # position or verdict; OpenAI's own API does not take it.
    json_schema: bool = False


class AnalystConfig(_Strict):
    name: str = Field(min_length=1)
    charge: str = Field(min_length=1)


class SourceConfig(_Strict):
    name: str = Field(min_length=1)
    command: str | list[str]
    timeout_seconds: float = Field(30.0, gt=0)


class SmtpConfig(_Strict):
    host: str = "127.0.0.1"
    port: int = 25
    sender: str
    to: list[str] = Field(min_length=1)
    username: str | None = None
    password_env: str | None = None
    starttls: bool = False
    subject: str = "Caucus briefing: {count} decisions"
    body: str = "{briefing}"


class NotifyConfig(_Strict):
    email: SmtpConfig | None = None
    command: str | list[str] | None = None  # given the briefing on stdin


class DeliberationConfig(_Strict):
    log: Path = Path("decisions.jsonl")
    max_rounds: int = Field(2, ge=1, le=MAX_ROUNDS)
    backend: BackendConfig = Field(default_factory=BackendConfig)
    panel: list[AnalystConfig] = Field(
        default_factory=lambda: [AnalystConfig(name=a.name, charge=a.charge) for a in DEFAULT_PANEL]
    )
    stances: list[str] = Field(default_factory=lambda: list(DEFAULT_STANCES))
    agenda: list[str] = Field(default_factory=list)
    evidence_sources: list[SourceConfig] = Field(default_factory=list)
    intents: Path = Path("intents.db")
    notify: NotifyConfig = Field(default_factory=NotifyConfig)
    anchor_command: str | list[str] | None = None
    memory: Path = Path("memory.md")
    half_life_days: float = Field(90.0, gt=0)

    @field_validator("stances")
    @classmethod
    def _lower(cls, value: list[str]) -> list[str]:
        return [s.strip().lower() for s in value]

    def analysts(self) -> list[Analyst]:
        return [Analyst(a.name, a.charge) for a in self.panel]

    def sources(self) -> list[Source]:
        return [Source(s.name, s.command, s.timeout_seconds) for s in self.evidence_sources]

    def resolved(self, base: Path) -> DeliberationConfig:
        """Relative paths taken from the config file's directory, not the caller's."""

        def at(p: Path) -> Path:
            return p if p.is_absolute() else base / p

        backend = self.backend
        if backend.mcp_config is not None:
            backend = backend.model_copy(update={"mcp_config": at(backend.mcp_config)})
        return self.model_copy(
            update={
                "log": at(self.log),
                "intents": at(self.intents),
                "memory": at(self.memory),
                "backend": backend,
            }
        )


def _where(error: dict[str, Any]) -> str:
    return ".".join(str(p) for p in error["loc"]) or "(top level)"


def parse(data: Any, *, origin: str) -> DeliberationConfig:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{origin} must be a mapping of keys, not {type(data).__name__}")
    try:
        config = DeliberationConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"{origin}: {_where(dict(first))}: {first['msg']}") from None
    try:
        check_panel(config.analysts(), config.stances, config.max_rounds)
    except ValueError as exc:
        raise ConfigError(f"{origin}: {exc}") from None
    return config


def load(path: Path) -> DeliberationConfig:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not YAML: {exc}") from None
    return parse(data, origin=str(path)).resolved(path.parent)


def find(directory: Path) -> Path | None:
    candidate = directory / CONFIG_NAME
    return candidate if candidate.is_file() else None
