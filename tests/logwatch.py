"""No credential in any log line, checked after every test.

Every test runs with the root logger at DEBUG and one more handler: the hub's own redacting
one (`caucus.logs.Redactor`, as `caucus hub` installs it), writing to memory. Every secret the
test mints is recorded where it is made (agent tokens, state handles and operator tokens in
`caucus.ids`, MCP session ids in the SDK's session manager and in `caucus.api.mcp.sessions`), and
when the test ends its log is searched for each of them, by value: a credential whose prefix
was cut off, or that was glued to other text, is found as well as a whole one. Subprocess hubs
write their own logs; tests/acceptance/test_private_files.py greps those.
"""

from __future__ import annotations

import io
import logging
import secrets
import types
import uuid
from collections.abc import Iterator
from typing import Any

import mcp.server.streamable_http_manager as sdk_sessions
import pytest

import caucus.api.mcp.sessions
import caucus.ids
from caucus.logs import Redactor

MINTED: list[str] = []
SHOWN = 16  # characters of a secret that, found in a log, count as the secret


def _token_urlsafe(nbytes: int | None = None) -> str:
    value = secrets.token_urlsafe(nbytes)
    MINTED.append(value)
    return value


def _uuid4() -> Any:
    value = uuid.uuid4()
    MINTED.append(value.hex)
    return value


_recording_secrets = types.SimpleNamespace(
    token_urlsafe=_token_urlsafe, token_hex=secrets.token_hex, token_bytes=secrets.token_bytes
)


@pytest.fixture(autouse=True)
def no_credential_logged(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(caucus.ids, "secrets", _recording_secrets)
    monkeypatch.setattr(sdk_sessions, "uuid4", _uuid4)
    monkeypatch.setattr(caucus.api.mcp.sessions, "uuid4", _uuid4)
    MINTED.clear()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(name)s: %(message)s"))
    handler.addFilter(Redactor())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    text = stream.getvalue()
    leaked = [secret for secret in MINTED if secret[:SHOWN] in text]
    if leaked:
        at = text.index(leaked[0][:SHOWN])
        line = text[text.rfind("\n", 0, at) + 1 : text.find("\n", at)]
        pytest.fail(f"{len(leaked)} minted credential(s) in the log, e.g. in: {line[:300]}")
