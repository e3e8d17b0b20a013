"""Persistence: an engine that runs units of work (`engine.py`; SQLite embedded by default)
and repositories of named statements (`repos/`, `sql/<dialect>/queries.sql`). ADR 0013."""
