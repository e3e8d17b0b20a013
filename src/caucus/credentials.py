"""The operator's token: given by configuration, or generated once and kept in the data dir."""

from __future__ import annotations

import logging
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from caucus.files import create_private, private_dir
from caucus.ids import new_token

if TYPE_CHECKING:
    from caucus.config import Settings

log = logging.getLogger(__name__)

OPERATOR_TOKEN_FILE = "operator-token"  # noqa: S105 - a file name, not a secret
OPERATOR_PREFIX = "cauop_"


@dataclass(frozen=True, slots=True)
class OperatorToken:
    token: str
    path: Path | None  # the file it lives in, when it was not configured
    created: bool  # generated on this start


def operator_token(settings: Settings) -> OperatorToken:
    """The configured operator token, else the one in `<data dir>/operator-token`, else a new
    one written there with mode 0600."""
    if settings.operator_token:
        return OperatorToken(settings.operator_token, None, False)
    folder = settings.data_dir()
    private_dir(folder)
    path = folder / OPERATOR_TOKEN_FILE
    token = new_token(OPERATOR_PREFIX)
    try:
        create_private(path, (token + "\n").encode("utf-8"))
    except FileExistsError:
        return OperatorToken(_read_token(path), path, False)
    return OperatorToken(token, path, True)


def _read_token(path: Path) -> str:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning("%s was readable by others (mode %o); restricting it to 0600", path, mode)
        path.chmod(0o600)
    token = path.read_text(encoding="utf-8").strip()
    if not token:
        raise RuntimeError(f"{path} is empty: delete it to generate a new operator token")
    return token
