"""Hub configuration: defaults < TOML file < `CAUCUS_*` environment < command-line flags."""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from caucus.defaults import READ_ELSEWHERE, default_db_path, user_data_dir
from caucus.domain.launches import Backend

DEFAULT_PORT = 8765


def exposed(host: str) -> bool:
    """Whether binding `host` lets other machines connect."""
    if host.lower() == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return True  # a name: it may resolve to anything


class SpawnProfile(BaseModel):
    """A model an agent with the spawn grant may start a teammate on (issue 34)."""

    model_config = ConfigDict(extra="forbid")

    backend: Backend = Field("openai", description="where the teammate's answers come from")
    model: str | None = Field(None, description="openai: the model's name on the server")
    base_url: str | None = Field(None, description="openai: the OpenAI-compatible /v1 URL")
    api_key_env: str | None = Field(
        None,
        pattern="^[A-Z_][A-Z0-9_]{0,63}$",
        description="the variable holding the server's key, passed on from the hub's environment",
    )
    description: str = Field("", max_length=280, description="what this profile is good for")

    @model_validator(mode="after")
    def _check(self) -> SpawnProfile:
        if self.backend == "openai" and not self.model:
            raise ValueError("an openai profile needs model: the model's name on the server")
        return self


class Settings(BaseSettings):
    """Everything a hub process can be told. Durations are in seconds."""

    model_config = SettingsConfigDict(env_prefix="CAUCUS_", extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(DEFAULT_PORT, ge=0, le=65535)
    db: str = Field(
        "",
        description="SQLite file path (empty: the user data directory), or a postgresql:// "
        "URL that several hub processes share",
    )
    ledger: str = Field(
        "", description="decision ledger (JSONL); empty means decisions.jsonl beside the database"
    )
    files_dir: str = Field(
        "",
        description="with a postgresql:// database, where the hub keeps its own files (operator "
        "token, ledger, watcher files); empty means the user data directory",
    )

    # Liveness: quiet after TTL/5, stale after 3·TTL/5, reaped after TTL, forgotten after grace.
    peer_ttl: float = Field(300.0, gt=0)
    reaped_grace: float = Field(1800.0, ge=0)
    maintenance_interval: float = Field(2.0, gt=0)
    loop_watch_interval: float = Field(
        0.05,
        ge=0,
        description="how often the hub checks that its event loop is not held up (the "
        "operator's upkeep report); 0: never",
    )

    # Delivery.
    visibility_timeout: float = Field(60.0, gt=0)
    receive_timeout_max: float = Field(25.0, gt=0)
    receive_batch_max: int = Field(100, ge=1, le=1000)
    idempotency_window: float = Field(86400.0, gt=0)
    task_visibility_timeout: float = Field(600.0, gt=0)
    task_ttl: float = Field(86400.0, gt=0)
    a2a_wait_max: float | None = Field(
        None,
        gt=0,
        description="a bound on a blocking A2A SendMessage's wait (default none: "
        "it answers once the task ends or asks for input, as A2A 1.0 says)",
    )
    a2a_front: str | None = Field(
        None,
        min_length=1,
        max_length=64,
        description="the agent a message to the room's A2A "
        "endpoint goes to when it names nobody (default: the room's only agent, if one)",
    )

    # The lanes past the frameworks (ADRs 0026, 0027, 0039): on unless a benchmark measures
    # what each buys by turning it off.
    lean_lane: bool = Field(
        True,
        description="answer a known agent's hot requests inside uvicorn's protocol, without an "
        "ASGI cycle (off: the ASGI stack answers them, as it does everything else)",
    )
    mcp_call_lane: bool = Field(
        True,
        description="answer a joined MCP session's tool calls without the SDK's request "
        "handling (off: the SDK answers them)",
    )

    # Waking hosts (issue 13): a watch ticket's life, and how a burst of messages is gathered
    # before it is pushed into a live session (quiet for the gap, or the cap since the first).
    watch_files: bool = Field(
        True,
        description="hand an MCP host on this machine a 0600 session file for its watcher; "
        "false hands every host a single-use ticket (a hub in a container behind a forwarded "
        "port, whose files its hosts cannot read)",
    )
    watch_ticket_ttl: float = Field(
        120.0, gt=0, description="seconds a `caucus watch --ticket` ticket may wait to be used"
    )
    push_gap: float = Field(
        1.5, ge=0, description="a burst is pushed once the hub has been quiet this long"
    )
    push_cap: float = Field(
        5.0, ge=0, description="a burst is pushed this long after its first message at most"
    )

    # Announcements: caps per sender, and how far back a newcomer catches up.
    announce_payload_bytes: int = Field(4096, ge=1)
    announce_subject_chars: int = Field(120, ge=1)
    announce_interval: float = Field(30.0, ge=0)
    announce_hourly: int = Field(10, ge=1)
    announce_catch_up: float = Field(86400.0, ge=0)
    open_offers_max: int = Field(5, ge=1, description="open offers one poster may have")
    pending_forms_max: int = Field(5, ge=1, description="forms one asker may have pending")

    # File reservations (issue 34): advisory leases agents take on paths and globs.
    reservations: Literal["advisory", "enforce"] = Field(
        "advisory",
        description="advisory: a conflicting reservation is granted and the conflict reported; "
        "enforce: it is refused",
    )
    reservations_per_peer_max: int = Field(
        200, ge=1, description="paths and globs one agent may hold reserved at once"
    )

    # Teammates on demand (issue 34): what an agent the operator granted `spawn` may start.
    spawn_profiles: dict[str, SpawnProfile] = Field(
        default_factory=dict,
        description="model profiles by name (a TOML table per profile: backend, model, base_url,"
        " api_key_env, description); none: no agent can spawn",
    )
    spawn_tools: dict[str, str] = Field(
        default_factory=dict,
        description="tools a spawned teammate may be given, by name: an MCP server's command "
        "line (run over stdio, split into arguments, never by a shell)",
    )
    spawn_room_max: int = Field(
        4, ge=0, le=16, description="spawned teammates running in the room at once"
    )

    # Live deliberations (`convene`): the model a `chair: model` deliberation decides on.
    chair_model: str = Field(
        "",
        description="the model that chairs `convene(chair='model')` and writes thread summaries;"
        " empty: neither",
    )
    chair_base_url: str = Field(
        "http://127.0.0.1:8080/v1", description="the chair model's OpenAI-compatible /v1 URL"
    )
    chair_api_key_env: str = Field("", description="the variable holding the chair model's key")

    # Limits.
    max_content_chars: int = Field(8192, ge=1)
    max_body_bytes: int = Field(64 * 1024, ge=1024)
    send_rate_capacity: float = Field(10.0, gt=0)
    send_rate_refill: float = Field(2.0, gt=0)
    status_rate_capacity: float = Field(5.0, gt=0)
    status_rate_refill: float = Field(0.2, gt=0)

    # Floods (issue 12): what one client address or one identity may do, and the room's caps.
    register_rate_capacity: float = Field(
        30.0, gt=0, description="new identities one client address may create at once"
    )
    register_rate_refill: float = Field(
        0.5, gt=0, description="new identities per second added back to an address's budget"
    )
    resume_rate_capacity: float = Field(
        30.0, gt=0, description="joins with its credentials one identity may make at once"
    )
    resume_rate_refill: float = Field(1.0, gt=0, description="per second added back")
    peers_max: int = Field(
        1000, ge=1, description="peers in the room (active, or away within their grace)"
    )
    channels_per_peer_max: int = Field(100, ge=1, description="channels one peer may be in")
    hands_per_floor_max: int = Field(100, ge=1, description="hands queued for one floor")
    mcp_unjoined_max: int = Field(
        256, ge=1, description="MCP sessions that have not joined; past it the oldest ends"
    )
    mcp_unjoined_idle: float = Field(
        60.0, gt=0, description="an MCP session that has not joined ends after this long"
    )

    stranger_concurrency: int = Field(
        2,
        ge=1,
        description="requests from parties the hub does not know yet (no credential it has "
        "seen) worked on at once; the rest wait their turn, so a flood queues behind itself",
    )
    stranger_rate: float = Field(
        200.0, gt=0, description="requests from parties the hub does not know let in per second"
    )
    stranger_burst: float = Field(
        100.0, gt=0, description="strangers' requests let in at once before that rate applies"
    )
    shield_capacity: float = Field(
        100.0,
        gt=0,
        description="refusals (malformed, unauthorized, forbidden, unknown, too large, rate "
        "limited: 400, 401, 403, 404, 405, 408, 413, 415, 429, 431) one address may earn at once",
    )
    shield_refill: float = Field(
        10.0, gt=0, description="refusals per second added back; past it, 429 at the door"
    )

    # Slow clients: the request head and body deadlines, and the connection cap (503 past it).
    head_timeout: float = Field(10.0, gt=0)
    body_timeout: float = Field(30.0, gt=0)
    max_connections: int = Field(4096, ge=16)
    operator_reserve: int = Field(
        32,
        ge=1,
        le=1024,
        description="connections the operator and observer still get past max_connections",
    )

    # What callers hold open (issue 47): parked receives and peeks, watches, A2A streams and
    # waits, MCP sessions, the live feed. 429 `cap_streams` past a cap.
    streams_per_identity_max: int = Field(
        16, ge=1, description="streams and waits one agent may hold open at once"
    )
    streams_room_max: int = Field(
        3072,
        ge=1,
        description="streams and waits all agents together may hold open (kept below "
        "max_connections, so other requests and the operator always find room)",
    )
    viewer_streams_max: int = Field(
        16, ge=1, description="live feeds the operator (and the observer) may hold open each"
    )

    # Costly reads (issue 47): searches and thread summaries, budgeted per identity and each
    # bounded in time (429 rate_limited, 503 query_timeout).
    search_rate_capacity: float = Field(
        10.0, gt=0, description="searches and summaries one identity may ask at once"
    )
    search_rate_refill: float = Field(0.5, gt=0, description="per second added back")
    query_budget: float = Field(
        3.0,
        gt=0,
        le=60,
        description="seconds a search, a summary or a transcript filter may take, its wait "
        "for its turn included",
    )

    # Retention: finished items (acknowledged messages, ended tasks, settled offers, answered
    # or canceled forms; never the ledger) older than this go, and the oldest go while the
    # database is over the size bound.
    retention_age: float = Field(30 * 86400.0, gt=0, description="seconds; default 30 days")
    retention_max_bytes: int = Field(
        256 * 1024 * 1024, ge=1024 * 1024, description="database size bound; default 256 MiB"
    )
    retention_batch: int = Field(500, ge=1, le=100_000, description="rows per purge slice at most")

    # Storage.
    sqlite_synchronous: str = Field("FULL", pattern="^(FULL|EXTRA|NORMAL)$")
    group_commit_max: int = Field(512, ge=1)

    # Credentials and exposure (ADR 0003).
    operator_token: str = Field("", description="generated and kept in the data dir when empty")
    observer_token: str = Field("", description="a read-only role; none when empty")
    agent_key: str = Field("", description="when set, /register requires it")
    public_url: str = Field(
        "",
        description="the hub's URL as agents elsewhere reach it (a proxy's): what A2A cards "
        "name; empty: the URL each request came in by (its one Host, as the Guard accepted it)",
        pattern=r"^(https?://[^\s/?#]+(/[^\s?#]*)?)?$",
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    allowed_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)

    # MCP over HTTP: a session idle this long ends (and its peer shows offline).
    mcp_session_idle: float = Field(1800.0, gt=0)

    # The operator's live feed and the transcript file.
    health_interval: float = Field(1.5, gt=0)
    feed_buffer: int = Field(10_000, ge=100)
    transcript: str = Field("", description="JSONL file of every routed message; off when empty")
    transcript_max_bytes: int = Field(0, ge=0, description="rotate past this size; 0: never")
    transcript_keep: int = Field(5, ge=1, description="rotated transcript files kept")

    log_level: str = "info"

    @property
    def streams_room_cap(self) -> int:
        """The room's cap on open streams: `streams_room_max`, but never within an eighth of
        the connection cap (at least 8), which stays for everything else."""
        margin = max(8, self.max_connections // 8)
        return max(1, min(self.streams_room_max, self.max_connections - margin))

    @field_validator("allowed_hosts", "allowed_origins", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.receive_timeout_max > 300:
            raise ValueError("receive_timeout_max must be at most 300 seconds")
        return self

    @property
    def quiet_after(self) -> float:
        return self.peer_ttl / 5

    @property
    def stale_after(self) -> float:
        return self.peer_ttl * 3 / 5

    @property
    def postgres(self) -> bool:
        """The database is a PostgreSQL server (several hub processes may share it)."""
        return self.db.startswith(("postgresql://", "postgres://"))

    def db_path(self) -> Path:
        """The SQLite file (for a PostgreSQL database: where a file would be, unused)."""
        if self.db and not self.postgres:
            return Path(self.db).expanduser()
        return default_db_path()

    def db_shown(self) -> str:
        """The database as it may be printed: a URL without its password."""
        if not self.postgres:
            return str(self.db_path())
        return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", self.db)

    @property
    def ledger_keyed_by_room(self) -> bool:
        """A PostgreSQL hub given no ledger and no files directory keeps its ledger under the
        room's own identity (`rooms/<room id>/` in the user data directory): two rooms on two
        databases never append to one chain."""
        return self.postgres and not self.ledger and not self.files_dir

    def ledger_path(self, room_id: str | None = None) -> Path:
        """The decision ledger: `ledger` if given; else decisions.jsonl beside the SQLite file
        or in `files_dir`; else (PostgreSQL) under the room's identity, which the database
        holds (`room_id`)."""
        if self.ledger:
            return Path(self.ledger).expanduser()
        if not self.ledger_keyed_by_room:
            return self.data_dir() / "decisions.jsonl"
        if room_id is None:
            raise BadSettings(
                "this PostgreSQL hub keeps its ledger under the room's identity: pass the "
                "ledger's path (the hub's GET /operator/ledger shows it: rooms/<room id>/"
                "decisions.jsonl in the user data directory), or set CAUCUS_LEDGER"
            )
        return user_data_dir() / "rooms" / room_id / "decisions.jsonl"

    def data_dir(self) -> Path:
        """Where the hub keeps its own files (the operator token, the ledger): beside the
        SQLite file, or for PostgreSQL `files_dir` (default: the user data directory)."""
        if not self.postgres:
            return self.db_path().parent
        return Path(self.files_dir).expanduser() if self.files_dir else user_data_dir()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # TomlConfigSettingsSource reads `toml_file` from model_config; it is None unless
        # load_settings() was given a file, and then it is the lowest-priority source.
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls))


class BadSettings(ValueError):
    """Settings that cannot be used, said in one line per problem, with what to do."""


# CAUCUS_TEST_* are the test suite's own (the backend, the time scale, the run's marker), set
# around every hub it starts.
OTHER_VARIABLES = READ_ELSEWHERE
TEST_PREFIX = "CAUCUS_TEST_"


def _where(name: str, config_file: Path | None) -> str:
    variable = f"CAUCUS_{name.upper()}"
    if variable in os.environ:
        return variable
    return f"{name} in {config_file}" if config_file is not None else name


def _suggest(word: str) -> str:
    close = difflib.get_close_matches(word.lower(), list(Settings.model_fields), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def _explained(exc: ValidationError, config_file: Path | None) -> BadSettings:
    lines = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"]) or "settings"
        if error["type"] == "extra_forbidden":
            lines.append(f"{name} in {config_file} is not a setting{_suggest(name)}")
            continue
        given = error.get("input")
        shown = f" (got {given!r})" if isinstance(given, str | int | float) else ""
        lines.append(f"{_where(name, config_file)}: {error['msg']}{shown}")
    return BadSettings("\n".join(lines))


def unknown_variables() -> list[str]:
    """One line per CAUCUS_* environment variable that is no setting but looks like one."""
    lines = []
    for variable in sorted(os.environ):
        if not variable.startswith("CAUCUS_") or variable in OTHER_VARIABLES:
            continue
        if variable.startswith(TEST_PREFIX):
            continue
        name = variable.removeprefix("CAUCUS_").lower()
        if name not in Settings.model_fields:
            close = difflib.get_close_matches(name, list(Settings.model_fields), n=1, cutoff=0.6)
            if close:
                lines.append(
                    f"{variable} is not a setting; did you mean CAUCUS_{close[0].upper()}?"
                )
    return lines


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build settings; `overrides` (command-line flags) win over everything else.

    The config file (argument, else `CAUCUS_CONFIG`) is TOML with the settings' field names as
    keys. Settings that cannot be used raise `BadSettings`, which says why in one line each.
    """
    try:
        return _load(config_file, overrides)
    except ValidationError as exc:
        if config_file is None and os.environ.get("CAUCUS_CONFIG"):
            config_file = Path(os.environ["CAUCUS_CONFIG"])
        raise _explained(exc, config_file) from None


def _load(config_file: Path | None, overrides: dict[str, Any]) -> Settings:
    clean = {k: v for k, v in overrides.items() if v is not None}
    if config_file is None and os.environ.get("CAUCUS_CONFIG"):
        config_file = Path(os.environ["CAUCUS_CONFIG"])
    if config_file is None:
        return Settings(**clean)
    if not config_file.is_file():
        raise BadSettings(f"no config file at {config_file}; create it, or unset CAUCUS_CONFIG")

    class FileSettings(Settings):
        model_config = SettingsConfigDict(
            env_prefix="CAUCUS_", extra="forbid", toml_file=config_file
        )

    return FileSettings(**clean)
