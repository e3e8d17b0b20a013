"""The room's caps are functions over counts, tested with no database (issue 14)."""

from __future__ import annotations

import pytest

from caucus.domain.caps import (
    check_announcement,
    check_channels,
    check_open_offers,
    check_peers,
    check_pending_forms,
)
from caucus.errors import (
    CapChannels,
    CapHourly,
    CapInterval,
    CapOpenForms,
    CapOpenOffers,
    CapPeers,
)


def test_counts_below_the_limit_pass_and_at_it_are_refused() -> None:
    cases = [
        (lambda n: check_peers(n, 3), CapPeers),
        (lambda n: check_open_offers(n, 3), CapOpenOffers),
        (lambda n: check_pending_forms(n, 3), CapOpenForms),
        (lambda n: check_channels(False, n, 3, "#ops"), CapChannels),
    ]
    for check, refusal in cases:
        check(2)
        with pytest.raises(refusal) as refused:
            check(3)
        assert refused.value.extra["cap"]


def test_a_member_is_never_refused_its_own_channel() -> None:
    check_channels(True, 100, 3, "#ops")


def test_announcements_wait_out_the_interval_then_the_hour() -> None:
    check_announcement(now=100, last=None, in_last_hour=0, min_interval=30, hourly=2)
    with pytest.raises(CapInterval) as early:
        check_announcement(now=100, last=90, in_last_hour=1, min_interval=30, hourly=2)
    assert early.value.extra["retry_after"] == 20
    check_announcement(now=120, last=90, in_last_hour=1, min_interval=30, hourly=2)
    with pytest.raises(CapHourly):
        check_announcement(now=200, last=120, in_last_hour=2, min_interval=30, hourly=2)
