"""Operator-form operations of the SQLite store. An answer (or cancellation) and the messages
that carry it commit in one transaction: a form is never answered without its audience
being told, and two operators racing get one winner."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

from caucus.domain.caps import check_pending_forms
from caucus.domain.forms import Form, FormField, FormState, Reach, settled
from caucus.domain.messages import AppendOutcome, NewMessage
from caucus.domain.names import BROADCAST, Target
from caucus.errors import Hint, NotFound
from caucus.storage.sqlite_base import stored_json
from caucus.storage.sqlite_offers import OfferOps

_FORM_COLS = (
    "id, asker, audience, title, fields, state, created_at, updated_at, answer, reason,"
    " decision_hash, asker_id"
)


def _fields_json(fields: list[FormField]) -> str:
    return json.dumps([f.record() for f in fields], sort_keys=True, separators=(",", ":"))


def _form(row: tuple[Any, ...]) -> Form:
    return Form(
        id=row[0],
        asker=row[1],
        audience=row[2],
        title=row[3],
        fields=[
            FormField(
                f["key"],
                f["label"],
                f["type"],
                tuple(f["options"]),
                f["required"],
                f["allow_other"],
            )
            for f in stored_json(row[4])
        ],
        state=FormState(row[5]),
        created_at=row[6],
        updated_at=row[7],
        answer=stored_json(row[8]) if row[8] is not None else None,
        reason=row[9],
        decision_hash=row[10],
    )


class FormOps(OfferOps):
    async def create_form(
        self, form: Form, *, asker_id: int, max_pending: int
    ) -> tuple[Form, bool]:
        fields = _fields_json(form.fields)

        def op(conn: sqlite3.Connection) -> tuple[Form, bool]:
            same = conn.execute(
                f"SELECT {_FORM_COLS} FROM forms WHERE asker_id = ? AND state = 'pending'"
                " AND title = ? AND audience = ? AND fields = ?",
                (asker_id, form.title, form.audience, fields),
            ).fetchone()
            if same is not None:
                return _form(same), True
            (pending,) = conn.execute(
                "SELECT COUNT(*) FROM forms WHERE asker_id = ? AND state = 'pending'", (asker_id,)
            ).fetchone()
            check_pending_forms(pending, max_pending)
            conn.execute(
                "INSERT INTO forms (id, asker_id, asker, audience, title, fields, state,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
                (
                    form.id,
                    asker_id,
                    form.asker,
                    form.audience,
                    form.title,
                    fields,
                    form.created_at,
                    form.updated_at,
                ),
            )
            return form, False

        return await self._write(op)

    async def get_form(self, form_id: str) -> Form | None:
        def op(conn: sqlite3.Connection) -> Form | None:
            row = conn.execute(
                f"SELECT {_FORM_COLS} FROM forms WHERE id = ?", (form_id,)
            ).fetchone()
            return _form(row) if row else None

        return await self._read(op)

    async def list_forms(self, state: FormState | None, limit: int = 200) -> list[Form]:
        def op(conn: sqlite3.Connection) -> list[Form]:
            if state is None:
                rows = conn.execute(
                    f"SELECT {_FORM_COLS} FROM forms ORDER BY created_at DESC LIMIT ?", (limit,)
                )
            else:
                rows = conn.execute(
                    f"SELECT {_FORM_COLS} FROM forms WHERE state = ? ORDER BY created_at LIMIT ?",
                    (state.value, limit),
                )
            return [_form(r) for r in rows.fetchall()]

        return await self._read(op)

    async def settle_form(
        self,
        form_id: str,
        *,
        state: FormState,
        answer: dict[str, Any] | None,
        reason: str | None,
        now: float,
        notify: Callable[[Form, Reach], list[tuple[NewMessage, Target]]],
    ) -> tuple[Form, list[AppendOutcome]]:
        def op(conn: sqlite3.Connection) -> tuple[Form, list[AppendOutcome]]:
            row = conn.execute(
                f"SELECT {_FORM_COLS} FROM forms WHERE id = ?", (form_id,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no form {form_id!r}", hint=Hint.LIST_FORMS, form_id=form_id)
            form = _form(row)
            form.state = settled(form, state)
            form.answer, form.reason, form.updated_at = answer, reason, now
            asker = conn.execute(
                "SELECT 1 FROM peers WHERE id = ? AND state IN ('active', 'reaped')", (row[11],)
            ).fetchone()
            present = asker is not None
            if not present:
                inside = False
            elif form.audience == BROADCAST:
                inside = True
            else:
                inside = (
                    conn.execute(
                        "SELECT 1 FROM channel_members WHERE channel = ? AND peer_id = ?",
                        (form.audience, row[11]),
                    ).fetchone()
                    is not None
                )
            # Messages first: appending raises (a closed channel) before it writes anything.
            outcomes = [
                self._append(conn, message, target, 0.0)
                for message, target in notify(form, Reach(present, inside))
            ]
            conn.execute(
                "UPDATE forms SET state = ?, answer = ?, reason = ?, updated_at = ? WHERE id = ?",
                (
                    state.value,
                    json.dumps(answer) if answer is not None else None,
                    reason,
                    now,
                    form_id,
                ),
            )
            return form, outcomes

        return await self._write(op)

    async def unrecorded_forms(self, limit: int = 100) -> list[Form]:
        def op(conn: sqlite3.Connection) -> list[Form]:
            rows = conn.execute(
                f"SELECT {_FORM_COLS} FROM forms WHERE state = 'answered'"
                " AND decision_hash IS NULL ORDER BY updated_at, id LIMIT ?",
                (limit,),
            )
            return [_form(r) for r in rows.fetchall()]

        return await self._read(op)

    async def note_ledger_intents(self, hashes: list[str], now: float) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT OR IGNORE INTO ledger_intents (hash, created_at) VALUES (?, ?)",
                [(h, now) for h in hashes],
            )

        await self._write(op)

    async def ledger_intents(self) -> set[str]:
        def op(conn: sqlite3.Connection) -> set[str]:
            return {r[0] for r in conn.execute("SELECT hash FROM ledger_intents")}

        return await self._read(op)

    async def clear_ledger_intents(self) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM ledger_intents")

        await self._write(op)

    async def mark_forms_recorded(self, hashes: dict[str, str]) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "UPDATE forms SET decision_hash = ? WHERE id = ? AND decision_hash IS NULL",
                [(digest, form_id) for form_id, digest in hashes.items()],
            )

        await self._write(op)
