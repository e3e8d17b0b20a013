"""What to do next, said as the tool to call (the MCP rendering of `caucus.errors.Hint`)."""

from __future__ import annotations

from caucus.errors import Hint

TOOL_HINTS: dict[Hint, str] = {
    Hint.REGISTER: "call join",
    Hint.RESUME: "call join with the handle that peer's join returned (the stdio bridge keeps "
    "its token and resumes it for you)",
    Hint.AGENT_KEY: "set the hub's agent key in CAUCUS_AGENT_KEY (bridge) or the "
    "X-Caucus-Agent-Key header (over HTTP)",
    Hint.LIST_PEERS: "call peers to see who is here",
    Hint.LIST_CHANNELS: "call channel with action 'list'",
    Hint.JOIN_CHANNEL: "call channel with action 'join' first",
    Hint.RAISE_HAND: "call floor with action 'raise' and wait for it to be passed to you",
    Hint.LIST_TASKS: "call task with action 'list'",
    Hint.LIST_OFFERS: "call offer with action 'list'",
    Hint.LIST_FORMS: "call ask_operator without a title",
    Hint.PROTOCOL: "call protocol without a section to see the sections",
    Hint.RETRY_LATER: "wait retry_after seconds, then call it again",
}
