-- Issue 34: full-text search over the message log. Words are runs of letters and digits, as
-- SQLite's unicode61 tokenizer splits them (PostgreSQL's parser would keep `src/a.py` whole),
-- stemmed as English. The document is stored: ranking and a phrase's recheck read it, where an
-- expression index made them recompute it for every candidate (a word in 1% of a million
-- messages took 275 ms to rank against 30 ms on SQLite: benchmarks/search.py).
ALTER TABLE messages ADD COLUMN search tsvector
    GENERATED ALWAYS AS (to_tsvector('english', regexp_replace(content, '(\W|_)+', ' ', 'g'))) STORED;
CREATE INDEX messages_search ON messages USING GIN (search);

-- A thread's messages, for its summary (most messages start none).
CREATE INDEX messages_thread ON messages (thread) WHERE thread IS NOT NULL;
