"""Defaults every entry point needs before it has loaded anything (a `caucus` command's
option defaults): here, apart from the modules that use them, so `caucus --help` and the
bridge start without loading the HTTP client."""

from __future__ import annotations

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
