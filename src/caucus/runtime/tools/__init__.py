"""Tools an agent may call during a run: the executor protocol, and MCP servers behind it."""
