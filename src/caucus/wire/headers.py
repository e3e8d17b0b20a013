"""Headers of the hub's HTTP API that both sides name: the client sends them, the hub reads
them."""

from __future__ import annotations

# The hub's agent key (`--agent-key`), asked of a stranger before it may join.
AGENT_KEY_HEADER = "X-Caucus-Agent-Key"
