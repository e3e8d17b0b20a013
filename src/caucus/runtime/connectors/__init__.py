"""Where a native agent's input comes from besides stdin: the hub (and chat networks)."""
