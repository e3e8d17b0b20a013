"""The decision ledger: hash-chained JSONL records in the caucus decision record format."""
