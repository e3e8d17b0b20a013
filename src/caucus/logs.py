"""The hub's log: one handler for every logger (uvicorn's and the MCP SDK's included), and no
credential in any line at any level.

Redaction is by value, not by the name of the parameter that carried it: every token shape the
hub mints (`cau_…`, `cauop_…`, state handles `h_…`), every MCP session id (32 hex digits, which
act as credentials), every secret the hub was configured with, and every query-string value
except those of a few parameters known to carry none (and then only when the value does not
look like a credential).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable
from typing import TextIO

REDACTED = "[redacted]"
# Parameters whose values are shown in the access log: counts, times, filters. Anything else
# (a token a client put in a URL by mistake, under whatever name) is not.
SHOWN_PARAMS = frozenset(
    {
        "timeout",
        "ack",
        "limit",
        "before",
        "format",
        "since",
        "until",
        "state",
        "role",
        "status",
        "section",
        "matching",
        "kind",
        "channel",
        "peer",
    }
)
_MINTED = re.compile(r"\b(?:cau[a-z]*_|h_)[A-Za-z0-9_-]{16,}|\b[0-9a-fA-F]{32}\b")
_QUERY = re.compile(r"([?&])([^=&\s\"#]*)=([^&\s\"#]*)")


class Redactor(logging.Filter):
    """Rewrites each record's message with every credential replaced by `[redacted]`."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._secrets = sorted({s for s in secrets if s and len(s) >= 8}, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        text = _QUERY.sub(self._query_value, text)
        return _MINTED.sub(REDACTED, text)

    @staticmethod
    def _query_value(match: re.Match[str]) -> str:
        sep, name, value = match.groups()
        if name.lower() in SHOWN_PARAMS and not _MINTED.search(value) and len(value) <= 64:
            return match.group(0)
        return f"{sep}{name}={REDACTED}"

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: let logging report it as it would
            return True
        clean = self.scrub(message)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.scrub(record.exc_text)
        record.msg, record.args = clean, None
        return True


def configure(level: str, secrets: Iterable[str] = (), stream: TextIO | None = None) -> Redactor:
    """One handler on the root logger, redacting; every other logger propagates to it (uvicorn
    is started with `log_config=None` so that it adds no handlers of its own)."""
    redactor = Redactor(secrets)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s:     %(name)s: %(message)s"))
    handler.addFilter(redactor)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    return redactor
