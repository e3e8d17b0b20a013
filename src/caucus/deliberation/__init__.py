"""Deliberation: a panel argues over evidence, a chair decides, the ledger records it."""
