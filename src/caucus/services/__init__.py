"""All policy lives here: identity, caps, rate limits, gates, state transitions."""
