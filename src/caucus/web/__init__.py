"""What the HTTP transport shares with everything that speaks its language: bearer parsing,
the error mapping, body limits and the Host/Origin guard, and the wire models, one per noun,
which the routes, `HubClient`, the console feed, the transcript and the MCP output schemas all
use."""
