-- What a watcher (`caucus watch`) holds instead of its peer's token (issue 13): a key that only
-- waits for and acknowledges that peer's messages, and single-use tickets a host reached from
-- elsewhere redeems for one. Both are stored as hashes and go when their peer ends.
CREATE TABLE watch_credentials (
    hash       BLOB    PRIMARY KEY,
    peer_id    INTEGER NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('key', 'ticket')),
    created_at REAL    NOT NULL,
    expires_at REAL
) WITHOUT ROWID;
CREATE INDEX watch_credentials_peer ON watch_credentials (peer_id, kind, created_at);
