"""What the hub's `/mcp` inbox resource and the stdio bridge's share: the URI scheme, the
MIME type, the description, the URI template, and the subscription bus that counts its
listeners. Apart from `api/mcp/inbox.py`, so the bridge never loads the hub's services to
follow its own inbox."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.subscriptions import InMemorySubscriptionBus, ServerEvent

SCHEME = "caucus"
MIME = "application/json"
DESCRIPTION = (
    "how many messages wait for you and the latest (reading consumes nothing; listen takes "
    "them); subscribe to be told when it changes"
)
# Every inbox's URI has this shape (RFC 6570). The tag is a capability handed out by `join`:
# the template says what an inbox URI looks like, it cannot be filled in without one.
TEMPLATE = types.ResourceTemplate(
    uri_template=f"{SCHEME}://inbox/{{name}}{{?tag}}",
    name="inbox",
    description=f"an agent's inbox: {DESCRIPTION}. Its URI, tag included, is in join's result",
    mime_type=MIME,
)


def inbox_resource(uri: str, name: str) -> types.Resource:
    return types.Resource(uri=uri, name=f"inbox of {name}", description=DESCRIPTION, mime_type=MIME)


async def list_templates(
    _: Any, __: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=[TEMPLATE])


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
