"""A form's settling is a domain rule, checked with no database (issue 14)."""

from __future__ import annotations

import pytest

from caucus.domain.forms import Form, FormState, settled
from caucus.errors import Conflict, InvalidRequest


def test_a_form_settles_once_from_pending() -> None:
    pending = Form("f_1", "alice", "all", "Ship?", [], FormState.PENDING, 0.0, 0.0)
    assert settled(pending, FormState.ANSWERED) is FormState.ANSWERED
    assert settled(pending, FormState.CANCELED) is FormState.CANCELED
    with pytest.raises(InvalidRequest):
        settled(pending, FormState.PENDING)
    for done in (FormState.ANSWERED, FormState.CANCELED):
        ended = Form("f_2", "alice", "all", "Ship?", [], done, 0.0, 0.0)
        with pytest.raises(Conflict) as refused:
            settled(ended, FormState.ANSWERED)
        assert refused.value.extra["state"] == done.value
