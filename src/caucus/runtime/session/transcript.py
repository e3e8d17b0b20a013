"""The NDJSON transcript: every event of the session, one JSON object per line, in order
(`transcript-<uuid>.ndjson`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from caucus.runtime.session.files import new_file


class TranscriptHarness:
    def __init__(self, folder: Path) -> None:
        self.session_id, path, self._file = new_file(folder, "transcript-{}.ndjson")
        self.path = str(path)

    def write(self, event: dict[str, Any]) -> None:
        self._file.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()
