"""What a purge answers: what went (or would go), and the database's size before and after."""

from __future__ import annotations

from pydantic import Field

from caucus.domain.retention import PurgeReport, StoreSize
from caucus.wire.fields import Wire


class SizeInfo(Wire):
    used_bytes: int = Field(description="bytes holding data")
    file_bytes: int = Field(description="the file's size, free pages included")

    @classmethod
    def of(cls, s: StoreSize) -> SizeInfo:
        return cls.model_construct(used_bytes=s.used_bytes, file_bytes=s.file_bytes)


class PurgeResult(Wire):
    dry_run: bool
    before: float = Field(description="finished items older than this were eligible")
    messages: int = Field(description="acknowledged messages no idempotency key still needs")
    tasks: int = Field(description="ended tasks, with their events")
    offers: int = Field(description="settled offers, with their claims")
    forms: int = Field(description="canceled forms, and answered ones on the ledger")
    size_before: SizeInfo
    size_after: SizeInfo

    @classmethod
    def of(cls, r: PurgeReport) -> PurgeResult:
        return cls.model_construct(
            dry_run=r.dry_run,
            before=r.before,
            messages=r.dropped.messages,
            tasks=r.dropped.tasks,
            offers=r.dropped.offers,
            forms=r.dropped.forms,
            size_before=SizeInfo.of(r.size_before),
            size_after=SizeInfo.of(r.size_after),
        )
