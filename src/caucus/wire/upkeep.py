"""What the hub's housekeeping costs, as the operator reads it (`GET /operator/upkeep`)."""

from __future__ import annotations

from pydantic import Field

from caucus.domain.retention import StoreSize
from caucus.domain.upkeep import LoopLag
from caucus.wire.fields import Wire
from caucus.wire.retention import SizeInfo


class Stall(Wire):
    at: float = Field(description="when the event loop ran again (epoch seconds)")
    ms: float = Field(description="how much later than asked it woke")


class UpkeepInfo(Wire):
    loop_interval_ms: float = Field(description="how often the loop is asked to wake (0: off)")
    loop_samples: int = Field(description="wake-ups measured since the hub started")
    loop_worst_ms: float = Field(description="the worst stall since the hub started")
    stalls: list[Stall] = Field(
        description="the most recent wake-ups at least 2 ms late, oldest first"
    )
    store: SizeInfo

    @classmethod
    def of(cls, lag: LoopLag, size: StoreSize) -> UpkeepInfo:
        return cls.model_construct(
            loop_interval_ms=round(lag.interval * 1000, 3),
            loop_samples=lag.samples,
            loop_worst_ms=round(lag.worst * 1000, 3),
            stalls=[Stall.model_construct(at=at, ms=round(s * 1000, 3)) for at, s in lag.stalls],
            store=SizeInfo.of(size),
        )
