"""The bridge's identities: one token per (hub, name), kept so that a restarted host resumes.

Each is a 0600 file under the user's state directory (its folder 0700), written atomically.
While a bridge uses an identity it holds an exclusive lock beside the file, released by the
operating system when the bridge exits however it exits: a second live session never borrows
the first one's identity (it is refused the name, as any other caller would be), and a host
restarted after a crash finds the lock free and the token waiting.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import IO

from caucus.defaults import user_state_dir
from caucus.files import private_dir, replace_atomically, try_lock


class IdentityStore:
    def __init__(self, hub_url: str, directory: Path | None = None) -> None:
        self.hub_url = hub_url.rstrip("/")
        self.directory = directory or user_state_dir() / "identities"
        self._locks: dict[str, IO[str]] = {}

    def path_for(self, name: str) -> Path:
        digest = hashlib.sha256(f"{self.hub_url}\n{name}".encode()).hexdigest()[:32]
        return self.directory / f"{digest}.json"

    def token_for(self, name: str) -> str | None:
        """The kept token of `name`, if this process may use it (no live bridge holds it)."""
        if not self._lock(name):
            return None
        path = self.path_for(name)
        try:
            if stat.S_IMODE(path.stat().st_mode) & 0o077:
                return None  # readable by others: not ours to trust
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if data.get("hub") != self.hub_url or data.get("name") != name:
            return None
        token = data.get("token")
        return token if isinstance(token, str) and token else None

    def keep(self, name: str, token: str) -> None:
        self._lock(name)
        private_dir(self.directory)
        body = json.dumps({"hub": self.hub_url, "name": name, "token": token})
        replace_atomically(self.path_for(name), body.encode("utf-8"), mode=0o600)

    def forget(self, name: str) -> None:
        """The identity ended (it left): nothing to resume."""
        self.path_for(name).unlink(missing_ok=True)
        self._release(name)

    def close(self) -> None:
        for name in list(self._locks):
            self._release(name)

    def _lock(self, name: str) -> bool:
        if name in self._locks:
            return True
        private_dir(self.directory)
        lock_path = self.path_for(name).with_suffix(".lock")
        descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        handle = os.fdopen(descriptor, "r+", encoding="utf-8")
        if not try_lock(handle):
            handle.close()
            return False
        self._locks[name] = handle
        return True

    def _release(self, name: str) -> None:
        handle = self._locks.pop(name, None)
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.close()
