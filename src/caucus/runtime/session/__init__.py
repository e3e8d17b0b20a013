"""Session logs: the agent's transcript written by harnesses, each to a file of its own."""
