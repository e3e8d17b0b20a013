"""The floor models stand on, below the services and the native runtime alike: the chat types,
the seam a model is reached through (one completion per call), the one tool loop above it, the
OpenAI-compatible model, tool-call parsing, and the tools a model may call (the executor seam,
MCP servers as tools). The hub's deliberations and `caucus agent` both stand here (ADR 0039)."""
