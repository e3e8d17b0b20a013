"""Persistence behind the `Store` protocol: SQLite (embedded, default); PostgreSQL to follow."""
