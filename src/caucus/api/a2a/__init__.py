"""The A2A door (issue 34): agents of other frameworks reach the room's agents over the A2A
protocol. A message to an agent becomes a Caucus task from the caller to that agent; the task's
states are already A2A's. Imported only when an A2A request arrives: the SDK and protobuf cost
most of a second, which `caucus hub` does not pay at start (ADR 0032)."""
