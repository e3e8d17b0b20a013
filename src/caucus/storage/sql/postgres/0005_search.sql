-- Issue 34: full-text search over the message log. Words are runs of letters and digits, as
-- SQLite's unicode61 tokenizer splits them (PostgreSQL's parser would keep `src/a.py` whole),
-- stemmed as English. The statements in queries.sql repeat this expression exactly.
CREATE INDEX messages_search ON messages
    USING GIN (to_tsvector('english', regexp_replace(content, '(\W|_)+', ' ', 'g')));

-- A thread's messages, for its summary (most messages start none).
CREATE INDEX messages_thread ON messages (thread) WHERE thread IS NOT NULL;
