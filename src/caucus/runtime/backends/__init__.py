"""Where an agent's answers come from: an OpenAI-compatible server, the Claude Code CLI, or a
scripted mock, behind one protocol (`base.AgentBackend`)."""
