"""Operator forms, and the ledger's intents (records about to be appended)."""

from __future__ import annotations

import json
from typing import Any

from caucus.domain.approvals import ToolCallSubject
from caucus.domain.forms import Form, FormField, FormState
from caucus.storage.engine import Row, Tx
from caucus.storage.rows import stored_json


def fields_json(fields: list[FormField]) -> str:
    return json.dumps([f.record() for f in fields], sort_keys=True, separators=(",", ":"))


def _call(stored: str | None) -> ToolCallSubject | None:
    if stored is None:
        return None
    raw = stored_json(stored)
    return ToolCallSubject(raw["tool"], raw["arguments"], raw["files"], raw["annotations"])


def _form(row: Row) -> Form:
    answer = row["answer"]
    return Form(
        id=row["id"],
        asker=row["asker"],
        audience=row["audience"],
        title=row["title"],
        fields=[
            FormField(
                f["key"],
                f["label"],
                f["type"],
                tuple(f["options"]),
                f["required"],
                f["allow_other"],
            )
            for f in stored_json(row["fields"])
        ],
        state=FormState(row["state"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        answer=stored_json(answer) if answer is not None else None,
        reason=row["reason"],
        decision_hash=row["decision_hash"],
        call=_call(row["tool_call"]),
        asker_id=row["asker_id"],
    )


class Forms:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def insert(self, form: Form, asker_id: int) -> None:
        self._tx.run(
            "form_insert",
            {
                "id": form.id,
                "asker_id": asker_id,
                "asker": form.asker,
                "audience": form.audience,
                "title": form.title,
                "fields": fields_json(form.fields),
                "created_at": form.created_at,
                "updated_at": form.updated_at,
                "tool_call": json.dumps(form.call.record()) if form.call is not None else None,
            },
        )

    def same_pending(self, form: Form, asker_id: int) -> Form | None:
        """The asker's pending form identical to `form`, if any."""
        params = {
            "asker_id": asker_id,
            "title": form.title,
            "audience": form.audience,
            "fields": fields_json(form.fields),
        }
        row = self._tx.one("form_same_pending", params)
        return _form(row) if row is not None else None

    def pending_count(self, asker_id: int) -> int:
        return int(self._tx.value("forms_pending_of_asker", {"asker_id": asker_id}))

    def get(self, form_id: str) -> Form | None:
        row = self._tx.one("form_by_id", {"id": form_id})
        return _form(row) if row is not None else None

    def with_asker(self, form_id: str) -> tuple[Form, int] | None:
        """A form and its asker's id, which the wire never shows; locked for this unit where
        the backend has row locks."""
        row = self._tx.one("form_for_update", {"id": form_id})
        return (_form(row), row["asker_id"]) if row is not None else None

    def listed(self, state: FormState | None, limit: int = 200) -> list[Form]:
        """Forms in one state, oldest first (or every form, newest first)."""
        if state is None:
            rows = self._tx.all("forms_all", {"limit": limit})
        else:
            rows = self._tx.all("forms_in_state", {"state": state.value, "limit": limit})
        return [_form(r) for r in rows]

    def settle(
        self,
        form_id: str,
        state: FormState,
        answer: dict[str, Any] | None,
        reason: str | None,
        now: float,
    ) -> bool:
        """Settle a pending form; False if it was settled already (nothing changes)."""
        params = {
            "id": form_id,
            "state": state.value,
            "answer": json.dumps(answer) if answer is not None else None,
            "reason": reason,
            "now": now,
        }
        return self._tx.run("form_settle", params) == 1

    def unrecorded(self, limit: int = 100) -> list[Form]:
        """Settled forms whose ledger record is not written yet, oldest first."""
        return [_form(r) for r in self._tx.all("forms_unrecorded", {"limit": limit})]

    def latest_recorded(self) -> str | None:
        """The ledger hash of the form recorded last, if any was."""
        row = self._tx.one("form_recorded_latest")
        return str(row["decision_hash"]) if row is not None else None

    def mark_recorded(self, hashes: dict[str, str]) -> None:
        """Note the ledger record (its hash) each form's answer became."""
        self._tx.many("form_mark_recorded", [{"id": f, "hash": h} for f, h in hashes.items()])


class LedgerIntents:
    """Hashes of records about to be appended to the ledger, noted durably first, so a crash
    between the two is recognised at start (ADR 0006)."""

    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def note(self, hashes: list[str], now: float) -> None:
        self._tx.many("ledger_intent_insert", [{"hash": h, "now": now} for h in hashes])

    def all(self) -> set[str]:
        return {r["hash"] for r in self._tx.all("ledger_intents_all")}

    def clear(self) -> None:
        self._tx.run("ledger_intents_clear")
