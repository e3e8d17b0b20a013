"""What a refusal of a name says: who holds it (or one a person cannot tell from it), since
when, and how it is resumed or freed (`NameInUse`, raised by `services/registry.py`)."""

from __future__ import annotations

from datetime import UTC, datetime

from caucus.domain.peers import Liveness, Peer, PeerView
from caucus.errors import Hint, NameInUse


def when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def age(seconds: float) -> str:
    if seconds < 90:
        return f"{max(seconds, 0):.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def name_in_use(
    holder: Peer, view: PeerView, now: float, grace: float, asked: str | None = None
) -> NameInUse:
    """The truth about who holds a name (or one that differs only by case: two names a
    person cannot tell apart in a roster), and how it is resumed or freed."""
    last_active = now - view.last_seen_age
    if view.state in (Liveness.OFFLINE, Liveness.REAPED):
        since: float = holder.offline_at or holder.reaped_at or last_active
        frees_at: float | None = since + grace
        how = "offline" if view.state is Liveness.OFFLINE else "away (reaped)"
        what = f"a peer that is {how} since {when(since)}"
        freed = (
            f"it is held for that peer until {when(since + grace)}, "
            "when its grace period ends, unless the operator kicks it sooner"
        )
    else:
        frees_at = None
        listening = "listening now" if view.listening else f"{view.state.value}"
        what = f"a peer that is {listening} (last active {age(view.last_seen_age)} ago)"
        freed = "it is freed when that peer leaves or the operator kicks it"
    twin = (
        f"the name {asked!r} differs only by case from {holder.name!r}, which is taken: "
        if asked is not None and asked != holder.name
        else ""
    )
    return NameInUse(
        f"{twin}the name {holder.name!r} belongs to {what}. Only that peer's credentials "
        f"resume it; {freed}. Otherwise choose another name",
        hint=Hint.RESUME,
        name=holder.name,
        holder_state=view.state.value,
        last_active_at=round(last_active, 3),
        frees_at=round(frees_at, 3) if frees_at is not None else None,
    )
