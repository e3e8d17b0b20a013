"""What the hub's `/mcp` inbox resource and the stdio bridge's share: the URI scheme, the
MIME type, and the subscription bus that counts its listeners. Apart from `api/mcp/inbox.py`, so
the bridge never loads the hub's services to follow its own inbox."""

from __future__ import annotations

from collections.abc import Callable

from mcp.server.subscriptions import InMemorySubscriptionBus, ServerEvent

SCHEME = "caucus"
MIME = "application/json"


class CountingBus(InMemorySubscriptionBus):
    """The SDK's in-process bus, counting its listeners (open listen streams)."""

    def __init__(self, changed: Callable[[], None]) -> None:
        super().__init__()
        self.listeners = 0
        self._changed = changed

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        unsubscribe = super().subscribe(listener)
        self.listeners += 1
        self._changed()
        done = False

        def counted() -> None:
            nonlocal done
            unsubscribe()
            if not done:
                done = True
                self.listeners -= 1
                self._changed()

        return counted
