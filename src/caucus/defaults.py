"""Defaults every entry point needs before it has loaded anything (a `caucus` command's
option defaults): here, apart from the modules that use them, so `caucus --help` and the
bridge start without loading the HTTP client."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DEFAULT_HUB = "http://127.0.0.1:8765"

# CAUCUS_* variables that are read elsewhere, not settings (never "did you mean …").
READ_ELSEWHERE = frozenset(
    {
        "CAUCUS_CONFIG",
        "CAUCUS_HOME",
        "CAUCUS_CLAUDE_CHANNEL",
        "CAUCUS_HUB",
        "CAUCUS_NAME",
        "CAUCUS_SESSION",
        "CAUCUS_CODEX_PUSH",
        "CAUCUS_CODEX_SOCKET",
        "CAUCUS_AGENT_MODEL",
        "CAUCUS_AGENT_BASE_URL",
        "CAUCUS_CLAUDE",
        "CAUCUS_GUARD",
    }
)


def user_data_dir() -> Path:
    """Where the hub keeps its database when `--db` is not given."""
    override = os.environ.get("CAUCUS_HOME")
    if override:
        return Path(override).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "caucus"


def user_state_dir() -> Path:
    """Where the bridge keeps what lets a restarted host resume its identity (its tokens)."""
    override = os.environ.get("CAUCUS_HOME")
    if override:
        return Path(override).expanduser() / "state"
    if sys.platform in ("win32", "darwin"):
        return user_data_dir() / "state"
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "caucus"


def default_db_path() -> Path:
    return user_data_dir() / "caucus.db"
