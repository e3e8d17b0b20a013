"""Caucus's own agent runtime (`caucus agent`): agents that run on a model, with tools, under
an orchestrator that turns input lines and notices into turns (issue 15)."""
