-- Issue 53: the search index moves to a file of its own (storage/sqlite_index.py, ADR 0042).
-- Merging its segments after a purge held the room's writer 16-37 ms a step at a million
-- messages, whatever the pages asked: in its own file its upkeep holds nothing a send waits
-- on. The index there is rebuilt from the log in the background; here a purged message's
-- words wait in `search_gone` until the index has forgotten them.
DROP TRIGGER messages_unindex;
DROP TABLE messages_fts;
DROP TABLE search_state;

CREATE TABLE search_gone (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    seq     INTEGER NOT NULL,
    content TEXT    NOT NULL
);

-- What the queue holds, kept as it changes: the size bound leaves it out (a purge would
-- otherwise see the words it moved here as still held, and purge on).
CREATE TABLE search_gone_size (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    bytes INTEGER NOT NULL
);
INSERT INTO search_gone_size (id, bytes) VALUES (1, 0);

CREATE TRIGGER messages_gone AFTER DELETE ON messages
BEGIN
    INSERT INTO search_gone (seq, content) VALUES (old.seq, old.content);
    UPDATE search_gone_size SET bytes = bytes + length(CAST(old.content AS BLOB)) WHERE id = 1;
END;
