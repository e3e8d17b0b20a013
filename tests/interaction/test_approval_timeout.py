"""An approval the operator did not answer in time is withdrawn (issue 48 item 5): its form
is canceled with the reason, on the ledger, and a late "approve" is refused with
`form_closed` instead of landing on the ledger for a call that never ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from caucus.domain.approvals import ToolCallSubject
from caucus.errors import FormClosed
from caucus.mcp.identity import IdentityStore
from caucus.operator_client import OperatorClient
from caucus.runtime.connectors.hub import HubConnector
from caucus.testing import make_hub, serve


async def test_a_timed_out_approval_is_withdrawn_and_a_late_answer_refused(
    tmp_path: Path,
) -> None:
    async with make_hub(tmp_path / "hub") as hub, serve(hub) as url:
        store = IdentityStore(url, tmp_path / "identities")
        connector = HubConnector(url, "editor", identities=store, approve_timeout=0.2)
        await connector.client.register("editor")
        subject = ToolCallSubject("shell", {"command": "rm -rf build/"}, {}, {})
        try:
            verdict = await connector.approve(subject)
        finally:
            await connector.client.aclose()
        assert not verdict.approved
        async with OperatorClient(url, token=hub.operator.token) as operator:
            (form,) = await operator.forms(state="canceled")
            assert form.reason is not None
            assert form.reason.startswith("timeout: no answer within 0.2 s")
            assert form.decision_hash is not None  # on the ledger, as canceled
            with pytest.raises(FormClosed) as late:
                await operator.answer_form(form.form_id, {"decision": "deny"})
            assert late.value.extra["state"] == "canceled"
            assert await operator.forms() == []  # nothing left pending
