-- Issue 34: full-text search over the message log. The index follows the log in batches
-- (services/search.py): a trigger indexing each message as it is stored cost the writer
-- ~25 µs a message in 50-message transactions, a batch of thousands ~4 µs.
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, content='messages', content_rowid='seq', tokenize='porter unicode61'
);

-- How far the index has come: every message with seq <= upto is in it (no row: none is).
CREATE TABLE search_state (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    upto INTEGER NOT NULL
);

-- An external-content index forgets a row only when told its old content.
CREATE TRIGGER messages_unindex AFTER DELETE ON messages
WHEN old.seq <= COALESCE((SELECT upto FROM search_state WHERE id = 1), 0)
BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;

-- A thread's messages, for its summary (most messages start none).
CREATE INDEX messages_thread ON messages (thread) WHERE thread IS NOT NULL;
