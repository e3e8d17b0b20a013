"""The one vocabulary of the wire: every request and response model, one per noun.

The routes, `HubClient`, the hub's `/mcp` door, the console feed, the transcript and the
native runtime all speak it. It imports only `domain/` (and the error tree every layer
shares), so any side of the wire may use it without pulling in the other.
"""
