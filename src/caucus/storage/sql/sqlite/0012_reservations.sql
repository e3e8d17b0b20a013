-- Issue 34: advisory file reservations (leases on paths and globs of a repository), held by a
-- peer until they expire, are released, or the peer is no longer here.
CREATE TABLE reservations (
    id          TEXT    PRIMARY KEY,
    holder_id   INTEGER NOT NULL,
    holder      TEXT    NOT NULL,
    pattern     TEXT    NOT NULL,
    exclusive   INTEGER NOT NULL,
    reason      TEXT,
    created_at  REAL    NOT NULL,
    expires_at  REAL    NOT NULL
);

CREATE INDEX reservations_holder ON reservations (holder_id, pattern);
CREATE INDEX reservations_expiry ON reservations (expires_at);
