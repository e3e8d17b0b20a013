"""The MCP surface: the tool catalog, its transports, and the watcher."""
