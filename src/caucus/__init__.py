"""Caucus: a local-first, supervised coordination hub for AI agents."""

__version__ = "0.1.0"
