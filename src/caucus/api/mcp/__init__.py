"""The hub's `/mcp` door: Streamable HTTP over the one tool catalog (`caucus.mcp`), answered
in-process by the services."""
